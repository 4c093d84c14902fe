package e2ekit

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"

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

// see notes the identifiers distributed and the accounts told to use
// global code in the new chunks of a height.
func (g *globalContracts) see(chunks []near.ChunkView) error {
	for _, chunk := range chunks {
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
				return fmt.Errorf("receipt %s: %w", r.ReceiptID, err)
			}
			if ok {
				g.ids[d.ID.Kind()+":"+d.ID.Value()] = d.ID
			}
		}
	}
	return nil
}

// requests asks, at height, for the code of every identifier seen so far
// and, for every account told to use global code, its account, code, and a
// status_message view call (which fails with MethodNotFound where the
// account runs the guestbook).
func (g *globalContracts) requests(height uint64) []Request {
	var reqs []Request
	for _, k := range slices.Sorted(maps.Keys(g.ids)) {
		id := g.ids[k]
		params := map[string]any{"request_type": "view_global_contract_code", "code_hash": id.CodeHash, "block_id": height}
		if id.ByAccount() {
			params = map[string]any{"request_type": "view_global_contract_code_by_account_id", "account_id": id.AccountID, "block_id": height}
		}
		reqs = append(reqs, Request{"query", params})
	}
	args := base64.StdEncoding.EncodeToString([]byte(`{"account_id":"alice.near"}`))
	for _, a := range slices.Sorted(maps.Keys(g.users)) {
		reqs = append(reqs,
			Request{"query", map[string]any{"request_type": "view_account", "account_id": a, "block_id": height}},
			Request{"query", map[string]any{"request_type": "view_code", "account_id": a, "block_id": height}},
			Request{"query", map[string]any{"request_type": "call_function", "account_id": a, "method_name": "get_status",
				"args_base64": args, "block_id": height}})
	}
	return reqs
}
