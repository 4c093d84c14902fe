package indexer_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/logtest"
	"github.com/nearline/nearline/internal/metrics"
	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
	"github.com/nearline/nearline/upstream"
)

var skippedSet = map[uint64]bool{5: true, 17: true, 18: true, 19: true, 44: true, 60: true}

func testChain() *storetest.Chain {
	return storetest.NewChain(storetest.ChainConfig{Start: 1, End: 80, Shards: 3, Skipped: skippedSet,
		Missing: func(h uint64, shard int) bool { return (h+uint64(shard))%9 == 0 }})
}

func TestBackfillIsCompleteAndOrdered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, src, s := newFakeRun(t, 100)
	src.latency = time.Millisecond
	ix, err := indexer.New(indexer.Config{From: ptr(1), To: ptr(70), Workers: 4, BatchSize: 7}, src, s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(ctx))

	height, hash, err := s.LatestBlock(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(70), height)
	require.Equal(t, storetest.BlockHash(70), hash)
	for h := uint64(1); h <= 70; h++ {
		_, blockErr := s.BlockView(ctx, near.HeightID(h))
		skipped, err := storetest.IsSkippedHeight(ctx, s, h)
		require.NoError(t, err)
		if skippedSet[h] {
			require.ErrorIs(t, blockErr, store.ErrNotFound, "height %d", h)
			require.True(t, skipped, "height %d recorded as skipped", h)
		} else {
			require.NoError(t, blockErr, "height %d", h)
			require.False(t, skipped, "height %d", h)
		}
	}
	skipped, err := storetest.IsSkippedHeight(ctx, s, 75)
	require.NoError(t, err)
	require.False(t, skipped, "beyond --to nothing is recorded")
	cfg, err := s.GenesisConfig(ctx)
	require.NoError(t, err)
	require.JSONEq(t, `{"chain_id":"fake","genesis_height":1}`, string(cfg))
	require.Equal(t, reference(t, c, 1, 70), digest(t, s), "same rows as one uninterrupted run")
}

func TestToOnSkippedHeightWaitsForTheLinkingBlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	src := newFakeSource(testChain(), 100)
	ix, err := indexer.New(indexer.Config{From: ptr(1), To: ptr(17), BatchSize: 4, Workers: 2}, src, s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(ctx))
	height, _, err := s.LatestBlock(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(20), height, "17-19 are skipped; block 20 proves it")
	for _, h := range []uint64{17, 18, 19} {
		skipped, err := storetest.IsSkippedHeight(ctx, s, h)
		require.NoError(t, err)
		require.True(t, skipped)
	}
}

func TestFollowWaitsForHeadAndStopsCleanly(t *testing.T) {
	t.Parallel()
	_, src, s := newFakeRun(t, 10)
	ix, err := indexer.New(indexer.Config{From: ptr(1), BatchSize: 5, PollInterval: 5 * time.Millisecond}, src, s, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx) }()

	waitHeight := func(want uint64) {
		t.Helper()
		wait.For(t, 10*time.Second, fmt.Sprintf("height %d committed", want), func() bool {
			h, _, err := s.LatestBlock(context.Background())
			return err == nil && h >= want
		})
	}
	waitHeight(10)
	// Caught up: the loop polls the head and fetches nothing above it.
	// Five more polls after the commit of 10 show it has looked past it.
	polled := src.polls.Load()
	wait.For(t, 10*time.Second, "five more head polls", func() bool { return src.polls.Load() >= polled+5 })
	src.mu.Lock()
	require.Zero(t, src.fetches[11])
	src.mu.Unlock()
	src.head.Store(40)
	waitHeight(40)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, "a stop by signal is a clean exit")
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	h, _, err := s.LatestBlock(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(40), h)
}

func TestResumeAfterCancelAtRandomPoints(t *testing.T) {
	t.Parallel()
	c, src, s := newFakeRun(t, 100)
	src.latency = 2 * time.Millisecond
	runs, finished := 0, false
	for ; runs < 500; runs++ {
		ix, err := indexer.New(indexer.Config{To: ptr(80), Workers: 3, BatchSize: 6}, src, s, nil)
		require.NoError(t, err)
		timeout := time.Duration(10+rand.IntN(150)) * time.Millisecond
		if runs == 0 {
			timeout = 30 * time.Millisecond // too short for all 80 heights
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err = ix.Run(ctx)
		cancel()
		require.NoError(t, err)
		if h, _, err := s.LatestBlock(context.Background()); err == nil && h == 80 {
			finished = true
			break
		}
	}
	require.Greater(t, runs, 1, "the test stopped the loop at least once")
	if !finished {
		// A loaded machine can make 500 short runs too few to reach the
		// end: the last run resumes where they stopped, without a timeout.
		ix, err := indexer.New(indexer.Config{To: ptr(80), Workers: 3, BatchSize: 6}, src, s, nil)
		require.NoError(t, err)
		require.NoError(t, ix.Run(context.Background()))
	}
	require.Equal(t, reference(t, c, 1, 80), digest(t, s))
}

// failingSink interrupts the n-th commit half-way and reports failure.
type failingSink struct {
	*store.Store
	commits, failAt int
}

var _ indexer.Sink = (*failingSink)(nil)

func (f *failingSink) Write(ctx context.Context, b *bundle.Batch) (bundle.CommitStats, error) {
	f.commits++
	if f.commits != f.failAt {
		return f.Store.Write(ctx, b)
	}
	cctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(3000))*time.Microsecond)
	defer cancel()
	_, err := f.Store.Write(cctx, b)
	// %v, not %w: a permanent failure, so Run returns and is restarted.
	return bundle.CommitStats{}, fmt.Errorf("sink failed mid-commit: %v", err)
}

func TestResumeAfterSinkFailsMidCommit(t *testing.T) {
	t.Parallel()
	c, src, s := newFakeRun(t, 100)
	// Run again until a run reaches To: a run commits at most three
	// batches before its failure, and a loaded machine fetches smaller
	// batches, so how many runs it takes is not a constant (20 were not
	// enough at load 25). The bound only ends a loop that makes no
	// progress.
	failures := 0
	for attempt := 0; attempt < 500; attempt++ {
		sink := &failingSink{Store: s, failAt: 1 + rand.IntN(4)}
		ix, err := indexer.New(indexer.Config{To: ptr(80), Workers: 2, BatchSize: 9}, src, sink, nil)
		require.NoError(t, err)
		err = ix.Run(context.Background())
		if err == nil {
			break
		}
		require.ErrorContains(t, err, "sink failed mid-commit")
		failures++
	}
	require.Greater(t, failures, 0)
	h, _, err := s.LatestBlock(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(80), h)
	require.Equal(t, reference(t, c, 1, 80), digest(t, s))
}

func TestReindexRangeNeverDuplicates(t *testing.T) {
	t.Parallel()
	_, src, s := newFakeRun(t, 100)
	run := func(from, to uint64) {
		ix, err := indexer.New(indexer.Config{From: ptr(from), To: ptr(to), BatchSize: 8}, src, s, nil)
		require.NoError(t, err)
		require.NoError(t, ix.Run(context.Background()))
	}
	run(1, 50)
	before := digest(t, s)
	run(18, 30) // starts inside a skipped run
	run(20, 20)
	run(1, 50)
	require.Equal(t, before, digest(t, s))
	h, _, err := s.LatestBlock(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(50), h)

	ix, err := indexer.New(indexer.Config{From: ptr(55)}, src, s, nil)
	require.NoError(t, err)
	err = ix.Run(context.Background())
	require.ErrorContains(t, err, "would leave heights 51-54 unindexed")
}

func TestContinuityMismatchStopsBeforeTheBadBlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, src, s := newFakeRun(t, 100)
	bad, _ := c.Bundle(30)
	bad.Block.Header.PrevHash = storetest.FakeHash("a fork")
	src.override[30] = bad
	requireContinuityStop(t, s, src, indexer.Config{From: ptr(1), To: ptr(60), BatchSize: 7}, 29,
		"height 30", storetest.FakeHash("a fork"), storetest.BlockHash(29))
	var above int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT
		(SELECT count(*) FROM blocks WHERE height >= 30) + (SELECT count(*) FROM state_changes WHERE block_height >= 30) +
		(SELECT count(*) FROM account_history WHERE block_height >= 30) + (SELECT count(*) FROM skipped_heights WHERE height >= 30)`).Scan(&above))
	require.Zero(t, above, "nothing at or after the mismatch is written")
}

func TestBlockOverAHeightReportedMissingIsAMismatch(t *testing.T) {
	t.Parallel()
	c, src, s := newFakeRun(t, 100)
	// The upstream says 12 has no block, yet 13 links to a block at 12.
	b13, _ := c.Bundle(13)
	src.override[13] = b13
	delete(src.override, 12)
	src.chain = storetest.NewChain(storetest.ChainConfig{Start: 1, End: 80, Shards: 3,
		Skipped: map[uint64]bool{5: true, 12: true, 17: true, 18: true, 19: true, 44: true, 60: true}})
	requireContinuityStop(t, s, src, indexer.Config{From: ptr(1), To: ptr(20), BatchSize: 20}, 11,
		"height 13", storetest.BlockHash(12), storetest.BlockHash(11))
}

// requireContinuityStop runs an indexer with cfg over src into s and
// requires it to stop with ErrContinuity, its message naming each of
// names, with the last committed block at height latest.
func requireContinuityStop(t *testing.T, s *store.Store, src indexer.Source, cfg indexer.Config, latest uint64, names ...string) {
	t.Helper()
	ctx := context.Background()
	ix, err := indexer.New(cfg, src, s, nil)
	require.NoError(t, err)
	err = ix.Run(ctx)
	require.ErrorIs(t, err, indexer.ErrContinuity)
	for _, name := range names {
		require.ErrorContains(t, err, name)
	}
	h, _, err := s.LatestBlock(ctx)
	require.NoError(t, err)
	require.Equal(t, latest, h)
}

// configCase is one configuration a constructor is given; wantErr is ""
// for a valid one.
type configCase[C any] struct {
	name    string
	cfg     C
	wantErr string
}

// requireConfigChecks builds each case's configuration with build: a valid
// one must build something, an invalid one must build nothing and be
// refused with an error containing prefix and wantErr.
func requireConfigChecks[C, T any](t *testing.T, prefix string, cases []configCase[C], build func(C) (*T, error)) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			built, err := build(c.cfg)
			if c.wantErr == "" {
				require.NoError(t, err)
				require.NotNil(t, built)
				return
			}
			require.ErrorContains(t, err, prefix+c.wantErr)
			require.Nil(t, built)
		})
	}
}

// TestConfigValidation: zero means the default for every field, so the zero
// value is valid; a negative value or --to below --from is refused, naming
// the setting.
func TestConfigValidation(t *testing.T) {
	t.Parallel()
	requireConfigChecks(t, "configure indexer: ", []configCase[indexer.Config]{
		{"zero value: every default", indexer.Config{}, ""},
		{"explicit values", indexer.Config{Workers: 1, BatchSize: 1, PollInterval: time.Millisecond}, ""},
		{"to equals from", indexer.Config{From: ptr(5), To: ptr(5)}, ""},
		{"to below from", indexer.Config{From: ptr(10), To: ptr(5)}, "--to 5 is below --from 10"},
		{"negative workers", indexer.Config{Workers: -1}, "workers -1"},
		{"negative batch size", indexer.Config{BatchSize: -3}, "batch size -3"},
		{"negative poll interval", indexer.Config{PollInterval: -time.Second}, "poll interval -1s"},
		{"negative progress interval", indexer.Config{ProgressInterval: -time.Second}, "progress interval -1s"},
		{"negative revisit interval", indexer.Config{RevisitInterval: -time.Second}, "revisit interval -1s"},
		{"negative database retry", indexer.Config{DatabaseRetry: -time.Minute}, "database retry -1m0s"},
	}, func(cfg indexer.Config) (*indexer.Indexer, error) {
		return indexer.New(cfg, nil, nil, nil)
	})
}

// TestNodeConfigValidation: zero means the default for every field; -1 is
// MaxInFlight's one "no bound"; any other negative value is refused by
// rpcsource.New, naming the setting.
func TestNodeConfigValidation(t *testing.T) {
	t.Parallel()
	requireConfigChecks(t, "configure node source: ", []configCase[rpcsource.Config]{
		{"zero value: every default", rpcsource.Config{}, ""},
		{"no upstream bound", rpcsource.Config{MaxInFlight: -1}, ""},
		{"upstream bound of one", rpcsource.Config{MaxInFlight: 1}, ""},
		{"upstream bound below -1", rpcsource.Config{MaxInFlight: -2}, "upstream concurrency -2"},
		{"negative block concurrency", rpcsource.Config{Concurrency: -1}, "block concurrency -1"},
		{"negative changes batch", rpcsource.Config{ChangesBatch: -1}, "changes batch -1"},
		{"negative tx final wait", rpcsource.Config{Waits: upstream.Waits{TxFinalWait: -time.Second}}, "tx final wait -1s"},
		{"negative tx stall wait", rpcsource.Config{Waits: upstream.Waits{TxStallWait: -time.Second}}, "tx stall wait -1s"},
		{"negative tx poll interval", rpcsource.Config{Waits: upstream.Waits{TxPollInterval: -time.Millisecond}}, "tx poll interval -1ms"},
		{"negative behind retries", rpcsource.Config{Waits: upstream.Waits{BehindRetries: -1}}, "behind retries -1"},
	}, func(cfg rpcsource.Config) (*rpcsource.Source, error) {
		return rpcsource.New(nil, cfg, nil)
	})
}

func TestRestartAfterToIsANoOp(t *testing.T) {
	t.Parallel()
	s := storetest.NewStore(t)
	src := newFakeSource(testChain(), 100)
	for range 2 {
		ix, err := indexer.New(indexer.Config{To: ptr(30)}, src, s, nil)
		require.NoError(t, err)
		require.NoError(t, ix.Run(context.Background()))
		h, _, err := s.LatestBlock(context.Background())
		require.NoError(t, err)
		require.Equal(t, uint64(30), h, "a second run with the same --to indexes nothing more")
	}
}

// flakySink fails its first commits the way a terminated connection does.
type flakySink struct {
	*store.Store
	failures int
}

var _ indexer.Sink = (*flakySink)(nil)

func (f *flakySink) Write(ctx context.Context, b *bundle.Batch) (bundle.CommitStats, error) {
	if f.failures > 0 {
		f.failures--
		return bundle.CommitStats{}, fmt.Errorf("commit: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"})
	}
	return f.Store.Write(ctx, b)
}

func TestTransientDatabaseErrorsAreRetried(t *testing.T) {
	t.Parallel()
	c := testChain()
	s := storetest.NewStore(t)
	var logs logtest.Buffer
	logger := logs.Logger()
	sink := &flakySink{Store: s, failures: 3}
	m, reg := newMetrics(t)
	ix, err := indexer.New(indexer.Config{To: ptr(40), BatchSize: 10, Metrics: m}, newFakeSource(c, 100), sink, logger)
	require.NoError(t, err)
	require.NoError(t, ix.Run(context.Background()))
	require.Zero(t, sink.failures)
	require.Equal(t, 3, strings.Count(logs.String(), "database unavailable; retrying"))
	require.Equal(t, reference(t, c, 1, 40), digest(t, s))
	rec := httptest.NewRecorder()
	metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Contains(t, rec.Body.String(), "nearline_database_retries_total 3\n")
	require.NotContains(t, rec.Body.String(), `kind="database"`, "a database retry is not an upstream error")

	// A database that stays unavailable ends the run once DatabaseRetry has
	// passed, with the last error.
	down := &flakySink{Store: storetest.NewStore(t), failures: 1 << 30}
	ix, err = indexer.New(indexer.Config{To: ptr(40), BatchSize: 10, DatabaseRetry: 300 * time.Millisecond}, newFakeSource(c, 100), down, nil)
	require.NoError(t, err)
	err = ix.Run(context.Background())
	require.ErrorContains(t, err, "database unavailable for")
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "57P01", pgErr.Code)

	// A permanent error is not retried.
	sink = &flakySink{Store: storetest.NewStore(t)}
	bad := &failingSink{Store: sink.Store, failAt: 1}
	ix, err = indexer.New(indexer.Config{To: ptr(40), BatchSize: 10, DatabaseRetry: time.Second}, newFakeSource(c, 100), bad, nil)
	require.NoError(t, err)
	require.ErrorContains(t, ix.Run(context.Background()), "sink failed mid-commit")
	require.Equal(t, 1, bad.commits)
}

// TestPrepareTellsTheSourceTheArchiveFloor: each Run tells the source the
// lowest height of the range it continues (its blocks' chunks are
// stored), so chunks below it are not fetched again.
func TestPrepareTellsTheSourceTheArchiveFloor(t *testing.T) {
	t.Parallel()
	_, src, s := newFakeRun(t, 40)
	for _, r := range [][2]uint64{{5, 10}, {11, 20}} {
		ix, err := indexer.New(indexer.Config{From: ptr(r[0]), To: ptr(r[1])}, src, s, nil)
		require.NoError(t, err)
		require.NoError(t, ix.Run(context.Background()))
	}
	r, ok, err := s.Range(context.Background())
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, 5, r.First)
	src.mu.Lock()
	defer src.mu.Unlock()
	require.Equal(t, []uint64{5, 5}, src.floors, "an empty archive's floor is --from; later, the first height of the range")
}

// overlapSink is a real store whose n-th write waits (for at most a
// second) until batch n+1 has been prepared: a loop that prepared only
// after writing would make every write wait the whole second.
type overlapSink struct {
	*store.Store
	mu                         sync.Mutex
	prepared, writes, overlaps int
}

func (s *overlapSink) Prepare(bundles []bundle.Bundle) (*bundle.Batch, error) {
	s.mu.Lock()
	s.prepared++
	s.mu.Unlock()
	return s.Store.Prepare(bundles)
}

func (s *overlapSink) Write(ctx context.Context, b *bundle.Batch) (bundle.CommitStats, error) {
	s.mu.Lock()
	s.writes++
	n := s.writes
	s.mu.Unlock()
	wait.Until(time.Second, func() bool { // for the next batch to be prepared
		s.mu.Lock()
		defer s.mu.Unlock()
		next := s.prepared > n
		if next {
			s.overlaps++
		}
		return next
	})
	return s.Store.Write(ctx, b)
}

// TestNextBatchIsPreparedWhileOneIsWritten requires the loop to build a
// batch's rows while the batch before it is being written, and the
// archive to be the same as one committed batch by batch.
func TestNextBatchIsPreparedWhileOneIsWritten(t *testing.T) {
	t.Parallel()
	c := testChain()
	sink := &overlapSink{Store: storetest.NewStore(t)}
	ix, err := indexer.New(indexer.Config{To: ptr(60), BatchSize: 10}, newFakeSource(c, 100), sink, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(context.Background()))
	t.Logf("%d writes, %d prepares, %d overlapped", sink.writes, sink.prepared, sink.overlaps)
	require.GreaterOrEqual(t, sink.writes, 6)
	// Every write but the last has a next batch to overlap with.
	require.GreaterOrEqual(t, sink.overlaps, sink.writes-1)
	require.Equal(t, reference(t, c, 1, 60), digest(t, sink.Store))
}

// countingSink counts the batches written.
type countingSink struct {
	*store.Store
	writes atomic.Int64
}

func (c *countingSink) Write(ctx context.Context, b *bundle.Batch) (bundle.CommitStats, error) {
	c.writes.Add(1)
	return c.Store.Write(ctx, b)
}

// TestMemoryBudgetCutsBatches: with a budget a few blocks deep, batches
// are cut short of BatchSize to stay within it; every height is still
// indexed, in order, and the progress line reports the budget's use and
// the rate's window.
func TestMemoryBudgetCutsBatches(t *testing.T) {
	t.Parallel()
	c := testChain()
	s := storetest.NewStore(t)
	sink := &countingSink{Store: s}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	ix, err := indexer.New(indexer.Config{To: ptr(80), BatchSize: 80, MemoryBudget: 1 << 20}, newFakeSource(c, 100), sink, logger)
	require.NoError(t, err)
	require.NoError(t, ix.Run(context.Background()))
	require.Equal(t, reference(t, c, 1, 80), digest(t, s))
	require.Greater(t, sink.writes.Load(), int64(2), "80 heights in more than the one batch BatchSize allows")
	require.Regexp(t, `msg=indexing .*rows=[1-9].*rate_window=.*memory_budget_used_mib=0 memory_budget_peak_mib=[01] memory_budget_mib=1`, logs.String())
}
