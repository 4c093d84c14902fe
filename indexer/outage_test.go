package indexer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/logtest"
	"github.com/nearline/nearline/internal/outage"
	"github.com/nearline/nearline/internal/retry"
	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/store/storetest"
	"github.com/nearline/nearline/upstream"
)

// downSource is a fakeSource whose upstream can be taken down: every call
// then fails as the near client fails once its attempts are spent.
type downSource struct {
	*fakeSource
	down  atomic.Bool
	calls atomic.Int64 // calls refused while down
}

func (s *downSource) refused(what string) error {
	s.calls.Add(1)
	return fmt.Errorf("call %s: %w: 8 attempts failed, last: connection refused", what, upstream.ErrUnavailable)
}

func (s *downSource) FinalHead(ctx context.Context) (uint64, error) {
	if s.down.Load() {
		return 0, s.refused("block")
	}
	return s.fakeSource.FinalHead(ctx)
}

func (s *downSource) GenesisConfig(ctx context.Context) (json.RawMessage, error) {
	if s.down.Load() {
		return nil, s.refused("genesis_config")
	}
	return s.fakeSource.GenesisConfig(ctx)
}

func (s *downSource) Bundle(ctx context.Context, height uint64) (*bundle.Bundle, error) {
	if s.down.Load() {
		return nil, s.refused("block")
	}
	return s.fakeSource.Bundle(ctx, height)
}

var fastOutage = retry.Backoff{Base: time.Millisecond, Max: 10 * time.Millisecond}

// TestFollowOutlivesUpstreamOutages: following the head (no To), the loop
// waits out an upstream that is down at start and one that goes down
// mid-run, however many calls fail, logs one line as each outage starts
// and one as it ends, and indexes on once the upstream is back.
func TestFollowOutlivesUpstreamOutages(t *testing.T) {
	t.Parallel()
	s := storetest.NewStore(t)
	src := &downSource{fakeSource: newFakeSource(testChain(), 30)}
	src.down.Store(true)
	var logs logtest.Buffer
	logger := logs.Logger()
	tracker := outage.New(outage.Config{Backoff: fastOutage}, logger)
	ix, err := indexer.New(indexer.Config{From: ptr(1), BatchSize: 5, Workers: 4, PollInterval: 5 * time.Millisecond,
		Upstream: tracker}, src, s, logger)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx) }()

	waitHeight := func(want uint64) {
		t.Helper()
		defer func() {
			if t.Failed() {
				t.Log(logs.String())
			}
		}()
		wait.For(t, 20*time.Second, fmt.Sprintf("height %d committed", want), func() bool {
			h, _, err := s.LatestBlock(context.Background())
			return err == nil && h >= want
		})
	}
	outageOf := func(calls int64) {
		t.Helper()
		start := src.calls.Load()
		wait.For(t, 20*time.Second, "calls refused while the upstream is down", func() bool {
			return src.calls.Load() >= start+calls
		})
		select {
		case err := <-done:
			t.Fatalf("Run returned during an outage of its upstream: %v", err)
		default:
		}
		require.True(t, tracker.State().Down)
	}

	outageOf(50) // down at start: the genesis config cannot be fetched
	src.down.Store(false)
	waitHeight(30)
	src.down.Store(true)
	src.head.Store(62)
	outageOf(50) // down mid-run, with heights to fetch
	src.down.Store(false)
	waitHeight(62)
	require.False(t, tracker.State().Down)
	cancel()
	require.NoError(t, <-done)

	out := logs.String()
	require.Equal(t, 2, strings.Count(out, "upstream unreachable"), out)
	require.Equal(t, 2, strings.Count(out, "upstream back"), out)
}

// TestBoundedRunGivesUpAfterPatience: with To set, an outage longer than
// UpstreamPatience ends Run with an error that says so.
func TestBoundedRunGivesUpAfterPatience(t *testing.T) {
	t.Parallel()
	s := storetest.NewStore(t)
	src := &downSource{fakeSource: newFakeSource(testChain(), 80)}
	ix, err := indexer.New(indexer.Config{From: ptr(1), To: ptr(70), BatchSize: 5, Workers: 2,
		UpstreamPatience: 300 * time.Millisecond, Upstream: outage.New(outage.Config{Backoff: fastOutage}, nil)}, src, s, nil)
	require.NoError(t, err)
	src.down.Store(true)
	began := time.Now()
	err = ix.Run(context.Background())
	var pe *outage.PatienceError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, upstream.ErrUnavailable)
	require.ErrorContains(t, err, "longer than the patience of 300ms")
	require.GreaterOrEqual(t, time.Since(began), 300*time.Millisecond)
	require.Less(t, time.Since(began), 10*time.Second)
}

// TestHeadBelowCursorIsSaidOnce: an upstream restarted from an older state
// (its head below the archive's cursor) is waited for with one line that
// names both heights, and one when it is back.
func TestHeadBelowCursorIsSaidOnce(t *testing.T) {
	t.Parallel()
	s := storetest.NewStore(t)
	src := newFakeSource(testChain(), 30)
	var logs logtest.Buffer
	ix, err := indexer.New(indexer.Config{From: ptr(1), BatchSize: 5, PollInterval: time.Millisecond}, src, s,
		logs.Logger())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx) }()
	wait.For(t, 20*time.Second, "height 30 committed", func() bool {
		h, _, err := s.LatestBlock(context.Background())
		return err == nil && h == 30
	})
	src.head.Store(3)
	polled := src.polls.Load()
	wait.For(t, 20*time.Second, "50 polls of the lower head", func() bool { return src.polls.Load() >= polled+50 })
	src.head.Store(40)
	wait.For(t, 20*time.Second, "height 40 committed", func() bool {
		h, _, err := s.LatestBlock(context.Background())
		return err == nil && h == 40
	})
	cancel()
	require.NoError(t, <-done)
	out := logs.String()
	require.Equal(t, 1, strings.Count(out, "upstream head 3 is below the archive's cursor 30; waiting"), out)
	require.Equal(t, 1, strings.Count(out, "upstream head is back at the archive's cursor"), out)
}
