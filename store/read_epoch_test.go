package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestEpochStart finds an epoch's first stored block (the fake chain's
// epochs are 100 heights; 200, 201 and 300 are skipped) and says whether
// the block before it is stored, across skipped heights and a range not
// indexed.
func TestEpochStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := storetest.NewChain(storetest.ChainConfig{Start: 150, End: 320, Shards: 1, Skipped: map[uint64]bool{200: true, 201: true, 300: true}})
	commit := func(s *store.Store, from, to uint64) {
		var batch []bundle.Bundle
		for _, h := range c.Heights() {
			if h >= from && h <= to {
				b, ok := c.Bundle(h)
				require.True(t, ok)
				batch = append(batch, b)
			}
		}
		_, err := s.Commit(ctx, batch)
		require.NoError(t, err)
	}
	type want struct {
		start      uint64
		prevStored bool
	}
	check := func(s *store.Store, height uint64, w want) {
		t.Helper()
		start, prevStored, err := s.EpochStart(ctx, height)
		require.NoError(t, err)
		require.Equal(t, w, want{start, prevStored}, "height %d", height)
	}

	whole := storetest.NewStore(t)
	commit(whole, 150, 320)
	check(whole, 170, want{150, false}) // the first stored block has no stored previous one
	check(whole, 202, want{202, true})
	check(whole, 299, want{202, true})
	check(whole, 320, want{301, true})

	// Heights 191-249 not indexed: epoch 2's start is in the gap.
	split := storetest.NewStore(t)
	commit(split, 150, 190)
	commit(split, 250, 320)
	check(split, 290, want{250, false})
	check(split, 320, want{301, true})
	check(split, 190, want{150, false})

	_, _, err := split.EpochStart(ctx, 220)
	require.ErrorIs(t, err, store.ErrNotFound)
}
