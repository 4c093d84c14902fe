package sim

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
)

// TestCongestionLevelFollowsTheQueues: chunks carry congestion_info from
// the shards' real receipt queues, so some levels are not zero, and
// EXPERIMENTAL_congestion_level is the level of the chunk `chunk` returns,
// by block and shard and by chunk id alike.
func TestCongestionLevelFollowsTheQueues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(120)
	n, _ := startNode(t, cfg)
	congestion, err := near.CongestionConfigOf(n.chain.layouts[0].config)
	require.NoError(t, err)
	nonzero, chunks := 0, 0
	for h := cfg.GenesisHeight + 1; h <= cfg.GenesisHeight+cfg.MaxHeight; h++ {
		id := near.HeightID(h)
		for s := uint64(0); s < uint64(cfg.Shards); s++ {
			req := near.ChunkRequest{BlockID: &id, ShardID: s}
			raw, err := n.Chunk(ctx, req)
			if err != nil {
				continue // a skipped height
			}
			var chunk near.ChunkView
			require.NoError(t, json.Unmarshal(raw, &chunk))
			require.NotNil(t, chunk.Header.CongestionInfo)
			got, err := n.CongestionLevel(ctx, req)
			require.NoError(t, err)
			require.Equal(t, near.CongestionLevel(chunk.Header.CongestionInfo, congestion), float64(got.CongestionLevel))
			byID, err := n.CongestionLevel(ctx, near.ChunkRequest{ChunkID: chunk.Header.ChunkHash})
			require.NoError(t, err)
			require.Equal(t, got, byID)
			chunks++
			if got.CongestionLevel > 0 {
				nonzero++
			}
		}
	}
	require.Positive(t, chunks)
	require.Positive(t, nonzero, "some chunks report congestion")
	t.Logf("%d of %d chunk lookups report a nonzero congestion level", nonzero, chunks)
	_, err = n.CongestionLevel(ctx, near.ChunkRequest{ChunkID: near.HashOf([]byte("no-such-chunk")).String()})
	require.Equal(t, near.UnknownChunk(near.HashOf([]byte("no-such-chunk")).String()), err)
}
