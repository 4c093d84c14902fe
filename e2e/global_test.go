package e2e

import (
	"encoding/base64"
	"encoding/json"
	"sort"
	"testing"

	"github.com/nearline/nearline/near"
)

// globalContracts collects, height by height, what the differential test
// asks about global contracts: the identifiers whose code the chunks carried
// (GlobalContractDistribution receipts) and the accounts transactions told
// to use global code.
type globalContracts struct {
	ids   map[string]near.GlobalContractID
	users map[string]bool
}

func newGlobalContracts() *globalContracts {
	return &globalContracts{ids: map[string]near.GlobalContractID{}, users: map[string]bool{}}
}

// see reads the new chunks of height from the simulator.
func (g *globalContracts) see(t *testing.T, sim *client, height uint64) {
	t.Helper()
	env, err := sim.call("block", map[string]any{"block_id": height})
	if err != nil || env.Result == nil {
		return
	}
	var block near.BlockView
	if err := json.Unmarshal(env.Result, &block); err != nil {
		t.Fatalf("decode block %d: %v", height, err)
	}
	for _, c := range block.Chunks {
		if c.HeightIncluded != height {
			continue
		}
		env, err := sim.call("chunk", map[string]any{"chunk_id": c.ChunkHash})
		if err != nil || env.Result == nil {
			t.Fatalf("chunk %s from sim: %v %s", c.ChunkHash, err, env.Error)
		}
		var chunk near.ChunkView
		if err := json.Unmarshal(env.Result, &chunk); err != nil {
			t.Fatalf("decode chunk %s: %v", c.ChunkHash, err)
		}
		for _, tx := range chunk.Transactions {
			for _, a := range tx.Actions {
				if a.UseGlobalContract != nil || a.UseGlobalContractByAccountID != nil {
					g.users[tx.ReceiverID] = true
				}
			}
		}
		for _, r := range chunk.Receipts {
			d, ok, err := r.Receipt.GlobalDistribution()
			if err != nil {
				t.Fatalf("receipt %s: %v", r.ReceiptID, err)
			}
			if ok {
				g.ids[d.ID.Kind()+":"+d.ID.Value()] = d.ID
			}
		}
	}
}

// requests asks, at height, for the code of every identifier seen so far
// and, for every account told to use global code, its account, code, and a
// status_message view call (which fails with MethodNotFound where the
// account runs the guestbook).
func (g *globalContracts) requests(height uint64) []request {
	keys := make([]string, 0, len(g.ids))
	for k := range g.ids {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var reqs []request
	for _, k := range keys {
		id := g.ids[k]
		params := map[string]any{"request_type": "view_global_contract_code", "code_hash": id.CodeHash, "block_id": height}
		if id.ByAccount() {
			params = map[string]any{"request_type": "view_global_contract_code_by_account_id", "account_id": id.AccountID, "block_id": height}
		}
		reqs = append(reqs, request{"query", params})
	}
	args := base64.StdEncoding.EncodeToString([]byte(`{"account_id":"alice.near"}`))
	for _, a := range sortedSet(g.users) {
		reqs = append(reqs,
			request{"query", map[string]any{"request_type": "view_account", "account_id": a, "block_id": height}},
			request{"query", map[string]any{"request_type": "view_code", "account_id": a, "block_id": height}},
			request{"query", map[string]any{"request_type": "call_function", "account_id": a, "method_name": "get_status",
				"args_base64": args, "block_id": height}})
	}
	return reqs
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
