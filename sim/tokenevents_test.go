package sim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTokenEventTraffic: the chain's traffic logs the NEP-297 events the
// explorer tables are tested against (FT transfers, burns of refunds whose
// sender left, NFT mints and transfers), and a receipt whose two function
// calls each make a promise (ftBurn's, when it succeeds) gets two receipts, each listed once
// in its transaction's status: the ft_on_transfer call the first makes is
// not lost to the second's transfer.
func TestTokenEventTraffic(t *testing.T) {
	t.Parallel()
	_, srv := startNode(t, Config{Seed: 1, Shards: 4, TxsPerBlock: 8, MaxHeight: 150})
	events := map[string]int{}
	burns := 0
	for h := uint64(1); h <= 140; h++ {
		r := rpc(t, srv.URL, "block", map[string]any{"block_id": h})
		if r.Error != nil {
			continue // skipped height
		}
		var block struct {
			Chunks []struct {
				ChunkHash      string `json:"chunk_hash"`
				HeightIncluded uint64 `json:"height_included"`
			} `json:"chunks"`
		}
		require.NoError(t, json.Unmarshal(r.Result, &block))
		for _, c := range block.Chunks {
			if c.HeightIncluded != h {
				continue
			}
			var chunk struct {
				Transactions []struct {
					Hash       string `json:"hash"`
					SignerID   string `json:"signer_id"`
					ReceiverID string `json:"receiver_id"`
					Actions    []json.RawMessage
				} `json:"transactions"`
			}
			require.NoError(t, json.Unmarshal(rpc(t, srv.URL, "chunk", map[string]any{"chunk_id": c.ChunkHash}).Result, &chunk))
			for _, tx := range chunk.Transactions {
				var st struct {
					ReceiptsOutcome []struct {
						ID      string `json:"id"`
						Outcome struct {
							ExecutorID string                     `json:"executor_id"`
							Logs       []string                   `json:"logs"`
							Status     map[string]json.RawMessage `json:"status"`
						} `json:"outcome"`
					} `json:"receipts_outcome"`
				}
				res := rpc(t, srv.URL, "EXPERIMENTAL_tx_status", map[string]any{"tx_hash": tx.Hash, "sender_account_id": tx.SignerID})
				require.Nil(t, res.Error)
				require.NoError(t, json.Unmarshal(res.Result, &st))
				seen := map[string]bool{}
				toStatus := false
				for _, o := range st.ReceiptsOutcome {
					require.False(t, seen[o.ID], "tx %s lists receipt %s twice", tx.Hash, o.ID)
					seen[o.ID] = true
					toStatus = toStatus || o.Outcome.ExecutorID == "status.near"
					for _, log := range o.Outcome.Logs {
						if body, ok := strings.CutPrefix(log, "EVENT_JSON:"); ok {
							var ev struct{ Event string }
							require.NoError(t, json.Unmarshal([]byte(body), &ev))
							events[ev.Event]++
						}
					}
				}
				_, failed := st.ReceiptsOutcome[0].Outcome.Status["Failure"]
				if tx.ReceiverID == "ft.near" && len(tx.Actions) == 2 && !failed {
					burns++
					require.True(t, toStatus, "tx %s: the ft_transfer_call reached status.near", tx.Hash)
				}
			}
		}
	}
	t.Logf("events %v, %d burn transactions", events, burns)
	require.Positive(t, burns)
	for _, e := range []string{"ft_transfer", "ft_burn", "nft_mint", "nft_transfer"} {
		require.Positive(t, events[e], e)
	}
}
