package archive_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/sim"
)

// TestArchiveMatchesSimulatorWithGlobalContracts compares the archive with
// a simulated chain at protocol 77, where accounts deploy global contracts
// (by hash and by account id, with redeploys), the code travels shard by
// shard, and accounts use it: at every height, view_account, view_code,
// view_state and call_function on each account that uses global code, and
// view_global_contract_code(_by_account_id) of each identifier, must be
// byte-identical, including the heights where a redeploy has reached some
// shards and not others.
func TestArchiveMatchesSimulatorWithGlobalContracts(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Seed: 5, Shards: 3, TxsPerBlock: 10, SkipRate: 0.1, MissingChunkRate: 0.1, MaxHeight: 90, ProtocolVersion: 77}
	outcomes := compareWithSimulator(t, cfg, globalRequests(t))
	for _, kind := range []string{"query/view_global_contract_code ok", "query/view_global_contract_code NO_GLOBAL_CONTRACT_CODE",
		"query/view_global_contract_code_by_account_id ok", "query/view_global_contract_code_by_account_id NO_GLOBAL_CONTRACT_CODE",
		"query/view_code ok", "query/call_function ok", "query/view_account ok"} {
		require.Positive(t, outcomes[kind], "no %q among %v", kind, outcomes)
	}
}

// globalRequests finds, in the simulator's chunks, the global contract
// identifiers distributed and the accounts told to use them, and asks
// about each at every height.
func globalRequests(t *testing.T) func(simH http.Handler, head uint64) []string {
	return func(simH http.Handler, head uint64) []string {
		ids := map[string]near.GlobalContractID{}
		users := map[string]bool{}
		for h := uint64(0); h <= head; h++ {
			var block struct {
				Result *struct {
					Chunks []struct {
						ChunkHash string `json:"chunk_hash"`
					} `json:"chunks"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal(post(t, simH, request("block", map[string]any{"block_id": h})), &block))
			if block.Result == nil {
				continue
			}
			for _, c := range block.Result.Chunks {
				var chunk struct {
					Result struct {
						Transactions []near.SignedTransactionView `json:"transactions"`
						Receipts     []near.ReceiptView           `json:"receipts"`
					} `json:"result"`
				}
				require.NoError(t, json.Unmarshal(post(t, simH, request("chunk", map[string]any{"chunk_id": c.ChunkHash})), &chunk))
				for _, tx := range chunk.Result.Transactions {
					for _, a := range tx.Actions {
						if a.UseGlobalContract != nil || a.UseGlobalContractByAccountID != nil {
							users[tx.ReceiverID] = true
						}
					}
				}
				for _, r := range chunk.Result.Receipts {
					d, ok, err := r.Receipt.GlobalDistribution()
					require.NoError(t, err)
					if ok {
						ids[d.ID.Kind()+d.ID.Value()] = d.ID
					}
				}
			}
		}
		require.NotEmpty(t, ids, "the chain distributed no global contract")
		require.NotEmpty(t, users, "no account was told to use a global contract")
		var reqs []string
		add := func(params map[string]any, h uint64) {
			params["block_id"] = h
			reqs = append(reqs, request("query", params))
		}
		args := base64.StdEncoding.EncodeToString([]byte(`{"account_id":"alice.near"}`))
		for h := uint64(0); h <= head; h++ {
			for _, id := range ids {
				if id.ByAccount() {
					add(map[string]any{"request_type": "view_global_contract_code_by_account_id", "account_id": id.AccountID}, h)
				} else {
					add(map[string]any{"request_type": "view_global_contract_code", "code_hash": id.CodeHash}, h)
				}
			}
			for id := range users {
				add(map[string]any{"request_type": "view_account", "account_id": id}, h)
				add(map[string]any{"request_type": "view_code", "account_id": id}, h)
				add(map[string]any{"request_type": "view_state", "account_id": id, "prefix_base64": ""}, h)
				add(map[string]any{"request_type": "call_function", "account_id": id, "method_name": "get_status", "args_base64": args}, h)
			}
		}
		return reqs
	}
}
