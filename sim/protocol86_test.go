package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
)

// TestProtocol86ChainIsMainnetsShape: Protocol86Config's chain ends on
// mainnet's ten shard ids under protocol 86, each split into new ids at
// its epoch start; receipt outcomes carry metadata version 4 from
// protocol 85 on; documents from protocol 86 on have instant_receipts in
// every chunk, listing each PromiseYield receipt in the chunk of the
// block that made it (the outcome listing it executed there, on that
// shard), carried by no chunk's receipts, and no other receipt; before
// protocol 86 documents have no such member.
func TestProtocol86ChainIsMainnetsShape(t *testing.T) {
	t.Parallel()
	cfg := Protocol86Config(5, 160)
	cfg.Runtime = sharedRuntime()
	n, srv := startNode(t, cfg)
	c := n.chain

	protocol, layout := protocolLayout(t, srv.URL, cfg.MaxHeight)
	require.Equal(t, uint32(86), protocol)
	require.Equal(t, []uint64{10, 11, 1, 8, 9, 6, 7, 4, 12, 13}, layoutIDs(layout))

	var instant, before86, v4, v3 int
	for h := uint64(0); h <= cfg.MaxHeight; h++ {
		status, _, body := httpGet(t, fmt.Sprintf("%s/v0/block/%d", srv.URL, h))
		require.Equal(t, http.StatusOK, status)
		if string(body) == "null" {
			continue
		}
		var doc struct {
			Shards []struct {
				ShardID uint64                     `json:"shard_id"`
				Chunk   map[string]json.RawMessage `json:"chunk"`
				Outcome []struct {
					ExecutionOutcome near.ExecutionOutcomeWithIDView `json:"execution_outcome"`
				} `json:"receipt_execution_outcomes"`
			} `json:"shards"`
		}
		require.NoError(t, json.Unmarshal(body, &doc))
		p := c.layoutAt(h).protocol
		for _, sh := range doc.Shards {
			for _, o := range sh.Outcome {
				var m struct {
					Version int `json:"version"`
				}
				require.NoError(t, json.Unmarshal(o.ExecutionOutcome.Outcome.Metadata, &m))
				if p >= 85 {
					require.Equal(t, 4, m.Version, "height %d", h)
					v4++
				} else {
					require.Equal(t, 3, m.Version, "height %d", h)
					v3++
				}
			}
			if sh.Chunk == nil {
				continue
			}
			raw, ok := sh.Chunk["instant_receipts"]
			if p < 86 {
				require.False(t, ok, "height %d: instant_receipts before protocol 86", h)
				before86++
				continue
			}
			require.True(t, ok, "height %d shard %d: no instant_receipts", h, sh.ShardID)
			var list []near.ReceiptView
			require.NoError(t, json.Unmarshal(raw, &list))
			for _, r := range list {
				instant++
				require.NotNil(t, r.Receipt.Action, r.ReceiptID)
				require.True(t, r.Receipt.Action.IsPromiseYield, r.ReceiptID)
				require.Equal(t, r.PredecessorID, r.ReceiverID, r.ReceiptID)
				require.Equal(t, sh.ShardID, c.shardIDOf(r.ReceiverID, h), "processed on its receiver's shard")
				_, carried := c.receiptChunks[r.ReceiptID]
				require.False(t, carried, "%s: an instant receipt in a chunk's receipts", r.ReceiptID)
				made := false
				for _, o := range sh.Outcome {
					for _, id := range o.ExecutionOutcome.Outcome.ReceiptIDs {
						made = made || id == r.ReceiptID
					}
				}
				require.True(t, made, "%s: not made by an outcome of its chunk", r.ReceiptID)
				rec := c.receipts[r.ReceiptID]
				require.NotNil(t, rec)
				got, err := json.Marshal(rec.view)
				require.NoError(t, err)
				want, err := json.Marshal(r)
				require.NoError(t, err)
				require.JSONEq(t, string(want), string(got))
			}
		}
	}
	t.Logf("%d instant receipts; %d chunks before protocol 86; %d outcomes with metadata v4, %d with v3", instant, before86, v4, v3)
	require.Positive(t, instant)
	require.Positive(t, before86)
	require.Positive(t, v4)
	require.Positive(t, v3)
}
