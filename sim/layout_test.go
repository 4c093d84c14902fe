package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/nearline/nearline/near"

	"github.com/stretchr/testify/require"
)

// reshardConfig is testConfig with three splits: at heights 25, 50 and 61,
// i.e. at the epoch starts 40, 60 and 80 (epochs of 20 heights).
func reshardConfig() Config {
	cfg := testConfig(110)
	cfg.ReshardAt = []uint64{25, 50, 61}
	cfg.MissingChunkRate = 0.3
	cfg.ProtocolVersion = 77
	return cfg
}

// protocolLayout reads EXPERIMENTAL_protocol_config at a height: its
// protocol version and shard layout.
func protocolLayout(t *testing.T, url string, height uint64) (uint32, near.ShardLayout) {
	t.Helper()
	r := rpc(t, url, "EXPERIMENTAL_protocol_config", map[string]any{"block_id": height})
	require.Nil(t, r.Error, "protocol config at %d", height)
	var cfg struct {
		ProtocolVersion uint32           `json:"protocol_version"`
		ShardLayout     near.ShardLayout `json:"shard_layout"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &cfg))
	return cfg.ProtocolVersion, cfg.ShardLayout
}

func layoutIDs(l near.ShardLayout) []uint64 {
	if l.V2 != nil {
		return l.V2.ShardIDs
	}
	ids := make([]uint64, len(l.V1.BoundaryAccounts)+1)
	for i := range ids {
		ids[i] = uint64(i)
	}
	return ids
}

// TestReshardingSplitsAShardAtEachEpochStart: with ReshardAt, the shard
// count and ids change at the first block of the chosen epochs and only
// there, each layout is nearcore's V2 derivation of the one before
// (children max id + 1 and + 2 at the parent's index, split and parent
// maps, version 3), the protocol version moves up by one per split,
// genesis_config keeps the genesis layout, and blocks carry one chunk per
// shard of their layout.
func TestReshardingSplitsAShardAtEachEpochStart(t *testing.T) {
	t.Parallel()
	n, srv := startNode(t, reshardConfig())
	c := n.chain

	var genesis near.GenesisConfig
	r := rpc(t, srv.URL, "genesis_config", nil)
	require.NoError(t, json.Unmarshal(r.Result, &genesis))
	require.NotNil(t, genesis.ShardLayout.V1)
	require.Nil(t, genesis.ShardLayout.V2)
	require.Len(t, genesis.ShardLayout.V1.BoundaryAccounts, 3)
	require.Equal(t, uint32(77), genesis.ProtocolVersion)

	splitEpochs := map[uint64]bool{2: true, 3: true, 4: true}
	var prevVersion uint32
	var prevLayout near.ShardLayout
	var prevEpoch uint64
	splits := 0
	for _, b := range c.blocks {
		version, layout := protocolLayout(t, srv.URL, b.height)
		ids := layoutIDs(layout)
		require.Len(t, b.view.Chunks, len(ids), "height %d: one chunk per shard of the layout", b.height)
		require.Len(t, b.view.Header.ChunkMask, len(ids))
		require.Equal(t, version, b.view.Header.LatestProtocolVersion)
		for i, ch := range b.view.Chunks {
			if ch.HeightIncluded == b.height {
				require.Equal(t, ids[i], ch.ShardID, "height %d index %d: a new chunk names its shard", b.height, i)
			}
		}
		if b.height == c.cfg.GenesisHeight {
			require.Equal(t, genesis.ShardLayout, layout)
		} else if b.epochIndex == prevEpoch || !splitEpochs[b.epochIndex] {
			require.Equal(t, prevVersion, version, "height %d: no split", b.height)
			require.Equal(t, prevLayout, layout, "height %d: no split", b.height)
		} else {
			splits++
			require.Equal(t, prevVersion+1, version, "height %d: the protocol version moves up at a split", b.height)
			checkDerived(t, prevLayout, layout)
		}
		prevVersion, prevLayout, prevEpoch = version, layout, b.epochIndex
	}
	require.Equal(t, 3, splits)
	final := layoutIDs(prevLayout)
	require.Len(t, final, 7)
	// Ids are identifiers: after the splits they are no longer 0..n-1.
	require.NotEqual(t, []uint64{0, 1, 2, 3, 4, 5, 6}, final)
	r = rpc(t, srv.URL, "genesis_config", nil)
	var again near.GenesisConfig
	require.NoError(t, json.Unmarshal(r.Result, &again))
	require.Equal(t, genesis.ShardLayout, again.ShardLayout, "genesis_config keeps the genesis layout")
}

// checkDerived checks that next is old with one shard split, as nearcore's
// ShardLayoutV2::derive makes it.
func checkDerived(t *testing.T, old, next near.ShardLayout) {
	t.Helper()
	require.NotNil(t, next.V2)
	v2 := next.V2
	oldIDs := layoutIDs(old)
	require.Equal(t, uint32(3), v2.Version)
	require.Len(t, v2.ShardIDs, len(oldIDs)+1)
	require.Len(t, v2.BoundaryAccounts, len(old.Boundaries())+1)
	require.True(t, slices.IsSorted(v2.BoundaryAccounts))
	top := slices.Max(oldIDs)
	p := slices.Index(v2.ShardIDs, top+1)
	require.GreaterOrEqual(t, p, 0, "the left child takes the largest id + 1")
	require.Equal(t, top+2, v2.ShardIDs[p+1], "the right child takes the largest id + 2")
	parent := oldIDs[p]
	require.Equal(t, slices.Concat(oldIDs[:p], []uint64{top + 1, top + 2}, oldIDs[p+1:]), v2.ShardIDs)
	// The new boundary is the first account of the right child.
	boundary := v2.BoundaryAccounts[p]
	require.NotContains(t, old.Boundaries(), boundary)
	require.Equal(t, top+2, next.ShardIDOf(boundary))
	require.Equal(t, parent, old.ShardIDOf(boundary))
	for i, id := range v2.ShardIDs {
		require.Equal(t, uint64(i), v2.IDToIndexMap[fmt.Sprint(id)])
		require.Equal(t, id, v2.IndexToIDMap[fmt.Sprint(i)])
		want := id
		if id == top+1 || id == top+2 {
			want = parent
		}
		require.Equal(t, want, v2.ShardsParentMap[fmt.Sprint(id)])
	}
	require.Len(t, v2.ShardsSplitMap, len(oldIDs))
	for _, id := range oldIDs {
		want := []uint64{id}
		if id == parent {
			want = []uint64{top + 1, top + 2}
		}
		require.Equal(t, want, v2.ShardsSplitMap[fmt.Sprint(id)])
	}
}

// TestReshardingDividesTheParentsState: every receipt executes, every state
// change is listed and every lake shard file exists on the shard of the
// layout at its height; a child whose chunk is missing right after its
// split repeats its parent's last chunk header, answered for the child's
// id and refused (INVALID_SHARD_ID) for the parent's.
func TestReshardingDividesTheParentsState(t *testing.T) {
	t.Parallel()
	n, srv := startNode(t, reshardConfig())
	c := n.chain
	repeatsParent := 0
	executed := 0
	for _, b := range c.blocks {
		l := c.layoutAt(b.height)
		for s, rs := range b.executed {
			for _, r := range rs {
				if r.dist != nil {
					continue
				}
				require.Equal(t, s, l.index(r.view.ReceiverID), "receipt %s at %d", r.view.ReceiptID, b.height)
				executed++
			}
		}
		var doc docMessage
		raw, err := c.documentAt(b.height)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &doc))
		require.Len(t, doc.Shards, len(l.ids))
		for i, sh := range doc.Shards {
			require.Equal(t, l.ids[i], sh.ShardID)
			for _, ch := range sh.StateChanges {
				require.Equal(t, l.ids[i], l.ids[l.index(ch.Change.AccountID)])
			}
		}
		for i, ch := range b.view.Chunks {
			if ch.ShardID == l.ids[i] {
				continue
			}
			// A missing chunk of a child repeats the parent's header.
			require.Less(t, ch.HeightIncluded, b.height)
			require.NotNil(t, l.parents)
			require.Equal(t, l.parents[l.ids[i]], ch.ShardID, "height %d index %d", b.height, i)
			repeatsParent++
			got := rpc(t, srv.URL, "chunk", map[string]any{"block_id": b.height, "shard_id": l.ids[i]})
			require.Nil(t, got.Error)
			var view near.ChunkView
			require.NoError(t, json.Unmarshal(got.Result, &view))
			require.Equal(t, ch.ChunkHash, view.Header.ChunkHash)
			got = rpc(t, srv.URL, "chunk", map[string]any{"block_id": b.height, "shard_id": ch.ShardID})
			require.NotNil(t, got.Error)
			require.Equal(t, "INVALID_SHARD_ID", got.Error.Cause.Name)
		}
	}
	require.Greater(t, executed, 100)
	require.Positive(t, repeatsParent, "some child missed its first chunk (missing chunk rate 0.3)")

	head := c.head()
	l := c.layoutAt(head.height)
	lake := func(id uint64) int {
		status, _, _ := httpGet(t, fmt.Sprintf("%s/lake/%012d/shard_%d.json", srv.URL, head.height, id))
		return status
	}
	for _, id := range l.ids {
		require.Equal(t, http.StatusOK, lake(id), "shard %d", id)
	}
	for _, old := range c.layouts[:len(c.layouts)-1] {
		require.Equal(t, http.StatusNotFound, lake(c.layouts[slices.Index(c.layouts, old)+1].split), "a split shard has no file after its split")
	}
}
