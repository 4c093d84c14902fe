package indexer

import (
	"testing"

	"github.com/stretchr/testify/require"
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
