package docsource_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/docs"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/store/storetest"
)

// splitConfig is the chain the tests here run: three shards, one split
// three times (at the first epoch starts at or after 20, 35 and 50), up to
// maxHeight; the seed, the rate of missing chunks and the transactions a
// block holds are each test's.
func splitConfig(seed uint64, missingChunkRate float64, txsPerBlock int, maxHeight uint64) sim.Config {
	return sim.Config{Seed: seed, Shards: 3, SkipRate: 0.1, MissingChunkRate: missingChunkRate, TxsPerBlock: txsPerBlock,
		EpochLength: 15, ReshardAt: []uint64{20, 35, 50}, ViewStateLimit: -1, MaxHeight: maxHeight}
}

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
	const maxHeight = 75
	chain := simtest.New(t, splitConfig(21, 0.35, 4, maxHeight))
	want, sources := chainSources(t, chain, maxHeight)
	want.Prepare(0)
	for _, src := range sources {
		src.Prepare(0)
	}
	repeated, blocks := 0, 0
	for h := uint64(0); h <= maxHeight; h++ {
		w := requireSameBundles(t, want, sources, h)
		if w == nil {
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

// shardQuery returns docs/database.md's SQL query "The shard that holds an
// account at a height", with the account and height it names as $1 and
// $2.
func shardQuery(t *testing.T) string {
	t.Helper()
	q := docs.SQLAfter(t, "docs/database.md", "The shard that holds an account at a height")
	require.Contains(t, q, "'alice.near'")
	require.Contains(t, q, "120000000")
	q = strings.Replace(q, "'alice.near'", "$1::text", 1)
	return strings.Replace(q, "120000000", "$2::bigint", 1)
}

// TestShardQueryFindsEachAccountsShard indexes a chain that splits a
// shard three times and runs docs/database.md's account-shard query for every
// account a block changed, at that height: it must name the shard whose
// part of the block's document lists the change (the simulator's own
// assignment), before, at and after each split.
func TestShardQueryFindsEachAccountsShard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const maxHeight = 70
	cfg := splitConfig(4, 0.1, 6, maxHeight)
	chain := simtest.New(t, cfg)
	s := storetest.NewStore(t)
	genesis, _ := simtest.GenesisFile(t, chain.Node)
	const indexed = maxHeight - 5 // the last heights may be skipped: --to waits for a block over them
	simtest.IndexEndpoints(t, s, indexed, genesis, chain.URL)
	query := shardQuery(t)

	checked := 0
	shards := map[uint64]bool{}
	for h := uint64(0); h <= indexed; h++ {
		var doc struct {
			Shards []struct {
				ShardID      uint64 `json:"shard_id"`
				StateChanges []struct {
					Change struct {
						AccountID string `json:"account_id"`
					} `json:"change"`
				} `json:"state_changes"`
			} `json:"shards"`
		}
		simtest.Document(t, chain.URL, h, &doc)
		for _, sh := range doc.Shards {
			for _, ch := range sh.StateChanges {
				var height int64
				var version int32
				var shard int64
				require.NoError(t, s.Pool().QueryRow(ctx, query, ch.Change.AccountID, int64(h)).Scan(&height, &version, &shard))
				require.Equal(t, int64(h), height)
				require.Equal(t, sh.ShardID, uint64(shard), "%s at %d (protocol %d)", ch.Change.AccountID, h, version)
				shards[sh.ShardID] = true
				checked++
			}
		}
	}
	t.Logf("%d account changes over heights 0..%d, on shards %v, found on their shard", checked, indexed, shards)
	require.Greater(t, checked, 300)
	require.Greater(t, len(shards), cfg.Shards+2, "changes on the children of the splits")
}

// TestSourcesAgreeOnAProtocol86Chain fetches every height of the
// simulator's protocol-86 chain (mainnet's ten shard ids by four splits,
// receipt metadata version 4, documents whose chunks carry
// instant_receipts) through the RPC source and the three document sources
// and requires the same Bundle from each: the `chunk` answers built from
// the documents are nearcore's ChunkView, without the indexer's
// instant_receipts and local_receipts.
func TestSourcesAgreeOnAProtocol86Chain(t *testing.T) {
	t.Parallel()
	cfg := sim.Protocol86Config(3, 130)
	cfg.ViewStateLimit = -1
	chain := simtest.New(t, cfg)
	want, sources := chainSources(t, chain, cfg.MaxHeight)
	want.Prepare(0)
	for _, src := range sources {
		src.Prepare(0)
	}
	var blocks, withMember, instant int
	for h := uint64(0); h <= cfg.MaxHeight; h++ {
		w := requireSameBundles(t, want, sources, h)
		if w == nil {
			continue
		}
		blocks++
		var doc struct {
			Shards []struct {
				Chunk *struct {
					Instant *[]json.RawMessage `json:"instant_receipts"`
				} `json:"chunk"`
			} `json:"shards"`
		}
		simtest.Document(t, chain.URL, h, &doc)
		for _, sh := range doc.Shards {
			if sh.Chunk != nil && sh.Chunk.Instant != nil {
				withMember++
				instant += len(*sh.Chunk.Instant)
			}
		}
	}
	t.Logf("%d blocks identical from 4 sources; %d document chunks with instant_receipts, %d instant receipts", blocks, withMember, instant)
	require.Positive(t, withMember)
	require.Positive(t, instant)
}
