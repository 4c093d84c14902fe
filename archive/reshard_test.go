package archive_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/verify/verifytest"
)

// TestArchiveMatchesSimulatorAcrossSplits compares the archive with a
// simulated chain that splits a shard three times (protocol 77 → 80, shard
// ids 0..3 → non-contiguous ids, 3 → 6 shards), with a high missing chunk
// rate so that children miss chunks right after their split and repeat
// their parent's chunk header: every height's blocks, chunks of every shard
// id any layout named (by block and shard id, refused with
// INVALID_SHARD_ID where the block's layout lacks it), state, changes,
// contract calls and global contracts must be byte-identical before, at
// and after each split.
func TestArchiveMatchesSimulatorAcrossSplits(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Seed: 9, Shards: 3, TxsPerBlock: 8, SkipRate: 0.1, MissingChunkRate: 0.3, MaxHeight: 100,
		EpochLength: 20, ReshardAt: []uint64{30, 41, 70}, ProtocolVersion: 77}
	outcomes, chain := compareWithSimulator(t, cfg, extra{})
	requireOutcomes(t, outcomes, append(verifytest.AnsweredKinds(), verifytest.GlobalKinds()...),
		"chunk INVALID_SHARD_ID", "EXPERIMENTAL_congestion_level INVALID_SHARD_ID")

	// The chain compared did what the comparison is meant to cover: the
	// layout changed at three epoch starts, and some child repeated its
	// parent's chunk header.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node := chain.Node
	var versions []uint32
	repeats := 0
	for h := uint64(0); h <= cfg.MaxHeight; h++ {
		id := near.HeightID(h)
		raw, err := node.Block(ctx, near.BlockReference{BlockID: &id})
		if err != nil {
			continue
		}
		var b near.BlockView
		require.NoError(t, json.Unmarshal(raw, &b))
		rawCfg, err := node.ProtocolConfig(ctx, near.BlockReference{BlockID: &id})
		require.NoError(t, err)
		var pc struct {
			ProtocolVersion uint32           `json:"protocol_version"`
			ShardLayout     near.ShardLayout `json:"shard_layout"`
		}
		require.NoError(t, json.Unmarshal(rawCfg, &pc))
		if len(versions) == 0 || versions[len(versions)-1] != pc.ProtocolVersion {
			versions = append(versions, pc.ProtocolVersion)
		}
		ids := pc.ShardLayout.ShardIDs()
		require.Len(t, b.Chunks, len(ids))
		for i, c := range b.Chunks {
			if c.ShardID != ids[i] {
				repeats++
			}
		}
	}
	require.Equal(t, []uint32{77, 78, 79, 80}, versions)
	require.Positive(t, repeats, "no child repeated its parent's chunk header")
	t.Logf("protocol versions %v; %d chunk headers repeated a parent's", versions, repeats)
}
