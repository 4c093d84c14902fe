package indexer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
	"github.com/nearline/nearline/upstream"
)

// TestSplitBackfillEqualsOneIndexer fills one archive with three indexers
// on their own cursors and disjoint ranges, run at once (so ranges meet in
// whatever order their commits land), and requires every table to hold
// exactly the rows one indexer over the whole range writes. The second
// range starts at a height the chain skipped, and blocks at the edges
// repeat chunks from below them.
func TestSplitBackfillEqualsOneIndexer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const top = 150
	chain := simtest.New(t, sim.Config{Seed: 21, Shards: 3, SkipRate: 0.1, MissingChunkRate: 0.3, TxsPerBlock: 3, MaxHeight: top + 20})
	client, err := upstream.NewClient(upstream.Config{Endpoints: []string{chain.URL}, Timeout: 5 * time.Second}, nil)
	require.NoError(t, err)
	genesis := chain.Node.Genesis().GenesisHeight
	// The second range starts at the first skipped height after 50.
	second := uint64(0)
	for h := genesis + 50; h < top; h++ {
		if _, err := chain.Node.Block(ctx, simtest.BlockRef(t, h)); near.IsUnknownBlock(err) {
			second = h
			break
		}
	}
	require.NotZero(t, second, "the chain skips a height above %d", genesis+50)
	third := second + 45

	run := func(s *store.Store, from, to uint64) error {
		ix, err := indexer.New(indexer.Config{From: &from, To: &to, Workers: 4, BatchSize: 7},
			simtest.NodeSource(t, client, rpcsource.Config{Waits: upstream.Waits{TxStallWait: 50 * time.Millisecond}}), s, nil)
		if err != nil {
			return err
		}
		return ix.Run(ctx)
	}

	one := storetest.NewStore(t)
	require.NoError(t, run(one, genesis, top))

	url := storetest.NewDatabaseURL(t)
	open := func(cursor string) *store.Store {
		s, err := store.Open(ctx, url, store.Config{MaxConns: 3, Cursor: cursor}, nil)
		require.NoError(t, err)
		t.Cleanup(s.Close)
		return s
	}
	a, b, c := open("a"), open("b"), open("c")
	var g errgroup.Group
	g.Go(func() error { return run(c, third, top) })
	g.Go(func() error { return run(a, genesis, second-1) })
	g.Go(func() error { return run(b, second, third-1) })
	require.NoError(t, g.Wait())

	storetest.RequireSameSums(t, storetest.TableSums(t, one.Pool(), "indexer_cursor"), storetest.TableSums(t, a.Pool(), "indexer_cursor"))

	st, err := a.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st.Ranges, 3)
	require.Equal(t, []store.Segment{{First: genesis, Last: st.Cursor.Height}}, st.Segments, "the three ranges joined")
	require.Empty(t, st.UnindexedRuns)
	require.Zero(t, st.Gaps)
	want, err := one.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, want.Cursor, st.Cursor)
}

// TestRangeEndsWhereItMeetsTheNextRange: an indexer asked for heights
// another cursor's range already holds stops below that range once the
// two link, whether the heights just below it are blocks or skipped; run
// again, it has nothing to do. A new cursor on an archive with ranges
// needs --from, and --from below a cursor's range is refused.
func TestRangeEndsWhereItMeetsTheNextRange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	chain := simtest.New(t, sim.Config{Seed: 5, Shards: 2, SkipRate: 0.2, TxsPerBlock: 1, MaxHeight: 120})
	client, err := upstream.NewClient(upstream.Config{Endpoints: []string{chain.URL}, Timeout: 5 * time.Second}, nil)
	require.NoError(t, err)
	genesis := chain.Node.Genesis().GenesisHeight
	skipped := func(h uint64) bool {
		_, err := chain.Node.Block(ctx, simtest.BlockRef(t, h))
		return near.IsUnknownBlock(err)
	}
	// One boundary after a block, one after a skipped height.
	var afterBlock, afterSkip uint64
	for h := genesis + 20; h < 100 && (afterBlock == 0 || afterSkip == 0); h++ {
		switch {
		case afterBlock == 0 && !skipped(h-1) && !skipped(h):
			afterBlock = h
		case afterSkip == 0 && afterBlock != 0 && h > afterBlock+10 && skipped(h-1):
			afterSkip = h
		}
	}
	require.NotZero(t, afterSkip)
	url := storetest.NewDatabaseURL(t)
	run := func(cursor string, from *uint64, to uint64) (*store.Store, error) {
		s, err := store.Open(ctx, url, store.Config{MaxConns: 3, Cursor: cursor}, nil)
		require.NoError(t, err)
		t.Cleanup(s.Close)
		ix, err := indexer.New(indexer.Config{From: from, To: &to, Workers: 4, BatchSize: 6},
			simtest.NodeSource(t, client, rpcsource.Config{Waits: upstream.Waits{TxStallWait: 50 * time.Millisecond}}), s, nil)
		require.NoError(t, err)
		return s, ix.Run(ctx)
	}
	_, err = run("upper", &afterSkip, 110)
	require.NoError(t, err)
	_, err = run("middle", &afterBlock, 110)
	require.NoError(t, err)
	_, err = run("new", nil, 110)
	require.ErrorContains(t, err, "give --from")
	_, err = run("upper", &afterBlock, 110)
	require.ErrorContains(t, err, "is below the cursor's range", "a range never grows down")
	s, err := run("lower", &genesis, 110)
	require.NoError(t, err)

	st, err := s.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, []store.Segment{{First: genesis, Last: st.Cursor.Height}}, st.Segments)
	require.Zero(t, st.Gaps)
	byName := map[string]bundle.Range{}
	for _, r := range st.Ranges {
		byName[r.Cursor] = r
	}
	require.Equal(t, afterBlock-1, byName["lower"].Last.Height, "lower stopped below middle")
	// middle ends at a skipped height: it stops at the block that links
	// over it, upper's first block.
	require.GreaterOrEqual(t, byName["middle"].Last.Height, afterSkip)
	var firstUpper uint64
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT min(height) FROM blocks WHERE height >= $1`, int64(afterSkip)).Scan(&firstUpper))
	require.Equal(t, firstUpper, byName["middle"].Last.Height)

	before := byName["lower"]
	_, err = run("lower", nil, 110)
	require.NoError(t, err)
	st, err = s.Status(ctx)
	require.NoError(t, err)
	for _, r := range st.Ranges {
		if r.Cursor == "lower" {
			require.Equal(t, before.Last, r.Last, "nothing to index the second time")
		}
	}
}
