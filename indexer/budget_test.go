package indexer

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/wait"
)

// TestBudgetReservesSettlesAndReleases: a fetch reserves the average
// block's weight while it fits (one always fits), settles to what it
// fetched (heavier blocks raise the average at once), and a release wakes
// whoever waits for room.
func TestBudgetReservesSettlesAndReleases(t *testing.T) {
	b := newBudget(100, 4)
	first, ok, _ := b.tryReserve()
	require.True(t, ok)
	require.Equal(t, int64(25), first, "a share per worker before any block was weighed")
	_, ok, freed := b.tryReserve()
	require.False(t, ok, "one fetch at a time until a block is weighed")
	b.settle(first, 25)
	<-freed
	var held []int64
	for range 3 {
		n, ok, _ := b.tryReserve()
		require.True(t, ok)
		require.Equal(t, int64(25), n, "the first block's weight")
		held = append(held, n)
	}
	_, ok, freed = b.tryReserve()
	require.False(t, ok, "the budget is spent")
	b.release(first)
	<-freed
	b.settle(held[0], 10)
	select {
	case <-freed:
	default:
		t.Fatal("a settled fetch wakes a waiting reserve")
	}
	used, _, _ := b.usage()
	require.Equal(t, int64(60), used)
	b.settle(held[1], 90) // heavier: the average moves half way at once
	used, peak, limit := b.usage()
	require.Equal(t, int64(125), used, "a fetch may weigh more than it reserved")
	require.Equal(t, int64(125), peak)
	require.Equal(t, int64(100), limit)
	require.Equal(t, int64(57), b.avg, "25 - 15/8 = 24 after the light block, then 24 + 66/2")
	b.release(125)
	n, ok, _ := b.tryReserve()
	require.True(t, ok)
	require.Equal(t, int64(57), n)
	b.release(n)
	used, _, _ = b.usage()
	require.Zero(t, used)

	big := newBudget(10, 1)
	big.avg = 50
	_, ok, _ = big.tryReserve()
	require.True(t, ok, "one block always fits an empty budget")
}

// gatedSource serves blocks of blockJSON bytes of JSON, each fetch held
// until gate is closed. Only Bundle is called.
type gatedSource struct {
	Source
	blockJSON int
	gate      chan struct{}
	calls     atomic.Int64
}

func (s *gatedSource) Bundle(ctx context.Context, height uint64) (*bundle.Bundle, error) {
	s.calls.Add(1)
	select {
	case <-s.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	b := &bundle.Bundle{BlockJSON: make([]byte, s.blockJSON)}
	b.Block.Header.Height = height
	return b, nil
}

// TestBatchEndsOnceItsFetchesHoldItsShare: a batch stops reserving once
// its running fetches' reservations reach half the budget, before any of
// them settled, so that the other half is left for the next batch while
// this one is prepared and written.
func TestBatchEndsOnceItsFetchesHoldItsShare(t *testing.T) {
	t.Parallel()
	const budgetBytes = 6_000_000
	weight := int64(budgetBytes / 10) // ten blocks fill the budget
	src := &gatedSource{blockJSON: int(weight / weightPerByte), gate: make(chan struct{})}
	ix, err := New(Config{Workers: 32, BatchSize: 50, MemoryBudget: budgetBytes}, src, nil, nil)
	require.NoError(t, err)
	n, ok, _ := ix.budget.tryReserve() // a block weighed before
	require.True(t, ok)
	ix.budget.settle(n, weight)
	ix.budget.release(weight)

	done := make(chan batch, 1)
	go func() {
		b, err := ix.fetchRange(context.Background(), 1, 50)
		assert.NoError(t, err)
		done <- b
	}()
	wait.For(t, 5*time.Second, "five fetches to start", func() bool { return src.calls.Load() >= 5 })
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, int64(5), src.calls.Load(), "no fetch started past the batch's share while none had settled")
	close(src.gate)
	b := <-done
	require.Len(t, b.results, 5)
	require.Equal(t, 5*weight, b.weight)
	used, _, _ := ix.budget.usage()
	require.Equal(t, 5*weight, used, "the batch holds half the budget")
}
