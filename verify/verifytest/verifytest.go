// Package verifytest gives the differential tests their requests: verify's
// plan (the one generator of "every method" requests, which `nearline
// verify` asks too), drawn from the simulator the tests compare with.
//
// The in-process differential tests (archive/) ask every request at every
// height (Every). The tests of the binary (e2e/, build tag e2e) ask a
// seeded sample (Sample): every method, every param form and every error
// kind at least once, at a few heights, since what a process adds is its
// wiring, and the in-process tests hold the rest.
package verifytest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/verify"
)

// Every is the plan of the in-process differential tests: every height,
// the changes of every account each touched, six of those accounts and
// two others asked about (every account of the chain at every fifth
// height), every transaction and receipt, two keys and two known view
// calls of each account (drawn anew at each height), and the edges
// (finality, heights past the head, unknown hashes, malformed requests).
func Every(t testing.TB) verify.PlanConfig {
	t.Helper()
	return verify.PlanConfig{
		Sample: verify.Every, AccountsPerHeight: 6, OtherAccounts: 2, AllAccountsEvery: 5,
		KeysPerAccount: 2, TxsPerHeight: verify.Every, CallsPerContract: 2,
		Calls: FixtureCalls(t), Edges: true,
	}
}

// Sample is the plan of the tests of the binary: heights drawn by seed
// (and every account at the first, middle and last of them), a few of
// each kind at each, and the edges.
func Sample(t testing.TB, heights int, seed uint64) verify.PlanConfig {
	t.Helper()
	return verify.PlanConfig{
		Sample: heights, Seed: seed, AccountsPerHeight: 3, OtherAccounts: 1, AllAccountsEvery: max(1, heights/2),
		KeysPerAccount: 1, TxsPerHeight: 2, CallsPerContract: 3, Calls: FixtureCalls(t), Edges: true,
	}
}

// Plan draws cfg's requests over the heights from..to of source (the
// simulator the test compares with), failing the test on an error.
func Plan(t testing.TB, source verify.Target, from, to uint64, cfg verify.PlanConfig) []verify.Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg.From, cfg.To = &from, &to
	plan, err := verify.NewPlan(ctx, source, cfg, nil)
	if err != nil {
		t.Fatalf("plan requests over %d-%d: %v", from, to, err)
	}
	return plan.Requests
}

// FixtureCalls are the view calls of the contracts in
// testdata/fixtures/wasm, by code hash, from their descriptors: methods
// with the arguments they take, so that they answer with data.
func FixtureCalls(t testing.TB) map[string][]verify.Call {
	t.Helper()
	calls := map[string][]verify.Call{}
	for _, f := range fixture.Glob(t, "wasm/*.json") {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		var d struct {
			CodeHash    string `json:"code_hash_base58"`
			ViewMethods []struct {
				Name     string          `json:"name"`
				ArgsJSON json.RawMessage `json:"args_json"`
			} `json:"view_methods"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("decode %s: %v", f, err)
		}
		for _, m := range d.ViewMethods {
			args := []byte(m.ArgsJSON)
			if len(args) == 0 || string(args) == "null" {
				args = []byte("{}")
			}
			calls[d.CodeHash] = append(calls[d.CodeHash], verify.Call{Method: m.Name, Args: args})
		}
	}
	return calls
}

// AnsweredKinds are the kinds of request (verify.Request.Kind) a plan
// over any simulated chain asks and must get answered with data at least
// once: a comparison of nothing but errors cannot pass. Chains at
// protocol 77 and later answer GlobalKinds too.
func AnsweredKinds() []string {
	return []string{"block", "block_effects", "EXPERIMENTAL_changes_in_block", "chunk", "EXPERIMENTAL_congestion_level",
		"gas_price", "EXPERIMENTAL_protocol_config", "genesis_config", "EXPERIMENTAL_genesis_config", "health", "validators",
		"tx", "EXPERIMENTAL_tx_status", "EXPERIMENTAL_receipt", "EXPERIMENTAL_receipt_to_tx",
		"changes/account_changes", "EXPERIMENTAL_changes/account_changes", "EXPERIMENTAL_changes/all_access_key_changes",
		"changes/contract_code_changes", "EXPERIMENTAL_changes/data_changes", "changes/single_access_key_changes",
		"query/view_account", "query/view_code", "query/view_state", "query/view_access_key", "query/view_access_key_list",
		"query/call_function"}
}

// GlobalKinds are the global contract queries, answered with data on
// chains at protocol 77 and later.
func GlobalKinds() []string {
	return []string{"query/view_global_contract_code", "query/view_global_contract_code_by_account_id"}
}

// YieldViews call the simulator's yielding contract's methods in view
// mode at height: nearcore refuses both (ProhibitedInView for
// promise_yield_create and promise_yield_resume).
func YieldViews(height uint64) []verify.Request {
	call := func(method string, args []byte) verify.Request {
		return verify.NewRequest("query", map[string]any{"request_type": "call_function", "account_id": "yield.near",
			"method_name": method, "args_base64": base64.StdEncoding.EncodeToString(args), "block_id": height})
	}
	return []verify.Request{call("request", []byte(`{"request":1}`)), call("respond", make([]byte, 40))}
}
