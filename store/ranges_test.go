package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

func openCursor(t *testing.T, url, cursor string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), url, store.Config{MaxConns: 2, Cursor: cursor}, nil)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// TestRangesJoinOnlyWhenTheyLink commits the upper range of a chain first
// on one cursor, then the lower range on another: the commit that makes
// them meet is refused when the block above does not link to the batch's
// last block (nothing of it is written), and joins them into one segment
// when it does. The same holds the other way round, for a batch whose
// first block does not link to the range below it.
func TestRangesJoinOnlyWhenTheyLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := storetest.NewChain(storetest.ChainConfig{Start: 10, End: 40, Skipped: map[uint64]bool{25: true}})

	url := storetest.NewDatabaseURL(t)
	lo, hi := openCursor(t, url, "lo"), openCursor(t, url, "hi")
	_, err := hi.Commit(ctx, c.Batch(25, 40, 0))
	require.NoError(t, err)
	st, err := hi.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, []store.Segment{{First: 25, Last: 40}}, st.Segments, "the range starts at the skipped height")

	_, err = lo.Commit(ctx, c.Batch(10, 20, 0))
	require.NoError(t, err)
	st, err = lo.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, []store.Segment{{First: 10, Last: 20}, {First: 25, Last: 40}}, st.Segments)
	require.Equal(t, []store.Segment{{First: 21, Last: 24}}, st.UnindexedRuns)
	require.EqualValues(t, 4, st.Gaps)

	// A fork: block 24 is not the one block 26 links to.
	forked := c.Batch(21, 24, 20)
	forked[len(forked)-1].Block.Header.Hash = storetest.FakeHash("fork")
	_, err = lo.Commit(ctx, forked)
	require.ErrorIs(t, err, store.ErrContinuity)
	require.ErrorContains(t, err, "of the range above")
	cur, _, err := lo.Cursor(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 20, cur.Height, "nothing of the refused batch is written")
	var stored int
	require.NoError(t, lo.Pool().QueryRow(ctx, `SELECT count(*) FROM blocks WHERE height BETWEEN 21 AND 24`).Scan(&stored))
	require.Zero(t, stored)

	_, err = lo.Commit(ctx, c.Batch(21, 24, 20))
	require.NoError(t, err)
	st, err = lo.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, []store.Segment{{First: 10, Last: 40}}, st.Segments)
	require.Empty(t, st.UnindexedRuns)
	require.Zero(t, st.Gaps)

	// Below: a range committed on top of another must link to its end.
	url = storetest.NewDatabaseURL(t)
	lo, hi = openCursor(t, url, "lo"), openCursor(t, url, "hi")
	_, err = lo.Commit(ctx, c.Batch(10, 30, 0))
	require.NoError(t, err)
	wrong := c.Batch(31, 40, 0)
	wrong[0].Block.Header.PrevHash = storetest.FakeHash("elsewhere")
	_, err = hi.Commit(ctx, wrong)
	require.ErrorIs(t, err, store.ErrContinuity)
	require.ErrorContains(t, err, "the range below ends with block")
	_, ok, err := hi.Cursor(ctx)
	require.NoError(t, err)
	require.False(t, ok)
	_, err = hi.Commit(ctx, c.Batch(31, 40, 0))
	require.NoError(t, err)
	latest, _, err := hi.LatestBlock(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 40, latest)
}

// TestLinkBelowAndRangeAbove: where an indexer starting at a height joins
// the range below and meets the range above.
func TestLinkBelowAndRangeAbove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := storetest.NewChain(storetest.ChainConfig{Start: 10, End: 60, Skipped: map[uint64]bool{41: true, 42: true}})
	url := storetest.NewDatabaseURL(t)
	a, b, mid := openCursor(t, url, "a"), openCursor(t, url, "b"), openCursor(t, url, "mid")
	_, err := a.Commit(ctx, c.Batch(10, 20, 0))
	require.NoError(t, err)
	_, err = b.Commit(ctx, c.Batch(41, 60, 0))
	require.NoError(t, err)

	l, ok, err := mid.LinkBelow(ctx, 21)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, bundle.Link{Block: bundle.Cursor{Height: 20, Hash: storetest.BlockHash(20)}, RangeFirst: 10}, l)
	_, ok, err = mid.LinkBelow(ctx, 22)
	require.NoError(t, err)
	require.False(t, ok, "height 21 is in no range: 22 begins one")
	_, ok, err = mid.LinkBelow(ctx, 43)
	require.NoError(t, err)
	require.False(t, ok, "b covers 42 but holds no block below 43")

	r, ok, err := mid.RangeAbove(ctx, 21)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "b", r.Cursor)
	require.EqualValues(t, 41, r.First)
	r, ok, err = b.RangeAbove(ctx, 15)
	require.NoError(t, err)
	require.True(t, ok, "a covers 15")
	require.Equal(t, "a", r.Cursor)
	_, ok, err = b.RangeAbove(ctx, 21)
	require.NoError(t, err)
	require.False(t, ok, "only b's own range is above 20")

	own, ok, err := b.Range(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, bundle.Cursor{Height: 60, Hash: storetest.BlockHash(60)}, own.Last)
}

func TestCursorNames(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"main", "b-2", "range_0.1", "A"} {
		require.NoError(t, store.ValidCursorName(ok), ok)
	}
	for _, bad := range []string{"", "a b", "x;drop", "é", string(make([]byte, 65))} {
		require.Error(t, store.ValidCursorName(bad), bad)
	}
}
