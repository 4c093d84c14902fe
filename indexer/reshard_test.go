package indexer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/sim"
)

// TestSourcesAgreeOnShardsAcrossSplits fetches every height of a chain that
// splits a shard three times through the RPC source and the three document
// sources, the lake directory without a head RPC (it reads the layout off
// the folder's shard files), and requires the same Bundle from each. Where
// a child shard's chunk is missing right after its split, the block repeats
// the parent's chunk header: the Bundle's ShardIDs then name the layout's
// shards (the child), which block_chunks is keyed by; elsewhere they are
// nil (the headers' shard ids are the layout's).
func TestSourcesAgreeOnShardsAcrossSplits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := sim.Config{Seed: 21, Shards: 3, SkipRate: 0.1, MissingChunkRate: 0.35, TxsPerBlock: 4, EpochLength: 15,
		ReshardAt: []uint64{20, 35, 50}, ViewStateLimit: -1}
	const maxHeight = 75
	_, srv := newSim(t, cfg, maxHeight)
	rpc := rpcClient(t, srv.URL)

	neardata, err := indexer.NewNeardataFetcher(fastHTTP(srv.URL))
	require.NoError(t, err)
	lakeHTTP, err := indexer.NewLakeFetcher(srv.URL+"/lake", fastHTTP(), rpc)
	require.NoError(t, err)
	lakeDir, err := indexer.NewLakeFetcher(writeLake(t, srv.URL, 0, maxHeight), near.ClientConfig{}, nil)
	require.NoError(t, err)
	sources := map[string]indexer.Source{
		"neardata":  docSource(t, neardata, rpc),
		"lake http": docSource(t, lakeHTTP, rpc),
		"lake dir":  docSource(t, lakeDir, rpc),
	}
	want := nodeSource(t, rpc, indexer.NodeConfig{TxStallWait: 200 * time.Millisecond, TxPollInterval: 20 * time.Millisecond})
	want.Prepare(0)
	for _, src := range sources {
		src.Prepare(0)
	}
	repeated, blocks := 0, 0
	for h := uint64(0); h <= maxHeight; h++ {
		w, werr := want.Bundle(ctx, h)
		for name, src := range sources {
			got, err := src.Bundle(ctx, h)
			if werr != nil {
				require.ErrorIs(t, werr, indexer.ErrNoBlock)
				require.ErrorIs(t, err, indexer.ErrNoBlock, "%s at %d", name, h)
				continue
			}
			require.NoError(t, err, "%s at %d", name, h)
			requireSameBundle(t, w, got, name)
		}
		if werr != nil {
			continue
		}
		blocks++
		if w.ShardIDs == nil {
			continue
		}
		require.Len(t, w.ShardIDs, len(w.Block.Chunks))
		for i, c := range w.Block.Chunks {
			if c.ShardID != w.ShardIDs[i] {
				require.Less(t, c.HeightIncluded, h, "height %d: only a repeated header names another shard", h)
				repeated++
			}
		}
	}
	t.Logf("%d blocks, %d chunk headers repeating a parent's, identical from 4 sources", blocks, repeated)
	require.Positive(t, repeated, "no child repeated its parent's chunk header")
}
