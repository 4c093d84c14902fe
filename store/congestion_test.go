package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestChunkCongestionReadsTheHeader: a chunk's congestion_info comes back
// as the upstream served it (u128 gas above u64 included) with the height
// that included the chunk; a chunk without one (an older protocol) gives
// nil; an unknown chunk ErrNotFound.
func TestChunkCongestionReadsTheHeader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	want := near.CongestionInfo{DelayedReceiptsGas: near.U128From64(5), BufferedReceiptsGas: near.U128{Hi: 1, Lo: 3},
		ReceiptBytes: 9, AllowedShard: 1}
	var congested, plain bundle.Chunk
	s, _ := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 3, Edit: func(b *bundle.Bundle) {
		if b.Height() != 2 {
			return
		}
		ch := &b.Chunks[0]
		ch.View.Header.CongestionInfo = &want
		var err error
		ch.JSON, err = json.Marshal(ch.View)
		require.NoError(t, err)
		congested, plain = *ch, b.Chunks[len(b.Chunks)-1]
	}})
	require.NotEqual(t, congested.View.Header.ChunkHash, plain.View.Header.ChunkHash, "the chain has two shards")

	info, included, err := s.ChunkCongestion(ctx, congested.View.Header.ChunkHash)
	require.NoError(t, err)
	require.Equal(t, &want, info)
	require.Equal(t, uint64(2), included)

	info, included, err = s.ChunkCongestion(ctx, plain.View.Header.ChunkHash)
	require.NoError(t, err)
	require.Nil(t, info)
	require.Equal(t, uint64(2), included)

	_, _, err = s.ChunkCongestion(ctx, storetest.FakeHash("no-such-chunk"))
	require.ErrorIs(t, err, store.ErrNotFound)
}
