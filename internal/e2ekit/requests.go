package e2ekit

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/near"
)

// ChainShape is what the differential test reads off the simulator to
// build its requests.
type ChainShape struct {
	GenesisHeight uint64
	Head          uint64
}

// ReadShape waits for sim's final head to reach minHead and settle, and
// reads its genesis height.
func ReadShape(t testing.TB, sim *Client, minHead uint64) ChainShape {
	t.Helper()
	head := WaitHead(t, sim, minHead, 60*time.Second)
	env, err := sim.Call("genesis_config", nil)
	if err != nil || env.Result == nil {
		t.Fatalf("genesis_config from sim: %v %s", err, env.Error)
	}
	var genesis struct {
		GenesisHeight uint64 `json:"genesis_height"`
	}
	if err := json.Unmarshal(env.Result, &genesis); err != nil {
		t.Fatalf("decode genesis_config: %v", err)
	}
	return ChainShape{GenesisHeight: genesis.GenesisHeight, Head: head}
}

// WaitHead polls the final block until its height has reached minHead and
// stayed put for a few polls, and returns that height.
func WaitHead(t testing.TB, c *Client, minHead uint64, timeout time.Duration) uint64 {
	t.Helper()
	var (
		last, stable int
		env          Envelope
		err          error
	)
	settled := wait.Until(timeout, func() bool {
		env, err = c.Call("block", map[string]any{"finality": "final"})
		if err != nil || env.Result == nil {
			return false
		}
		var head struct {
			Header struct {
				Height int `json:"height"`
			} `json:"header"`
		}
		if err = json.Unmarshal(env.Result, &head); err != nil {
			return false
		}
		if head.Header.Height == last {
			stable++
		} else {
			last, stable = head.Header.Height, 0
		}
		return uint64(last) >= minHead && stable >= 5
	})
	if !settled {
		t.Fatalf("%s: final head did not reach %d and settle within %s (at %d; %v %s)", c.URL, minHead, timeout, last, err, env.Error)
	}
	return uint64(last)
}

// BlockRequests lists the block and chunk requests for one height: by
// height, by hash, every shard by (block_id, shard_id) and by chunk_id, a
// shard that does not exist, and an unknown chunk hash.
func BlockRequests(t testing.TB, sim *Client, height uint64) []Request {
	t.Helper()
	reqs := []Request{
		{"block", map[string]any{"block_id": height}},
		{"chunk", map[string]any{"block_id": height, "shard_id": 0}},
	}
	env, err := sim.Call("block", map[string]any{"block_id": height})
	if err != nil {
		t.Fatalf("block %d from sim: %v", height, err)
	}
	if env.Result == nil {
		return reqs
	}
	var block struct {
		Header struct {
			Hash string `json:"hash"`
		} `json:"header"`
		Chunks []struct {
			ChunkHash string `json:"chunk_hash"`
			ShardID   uint64 `json:"shard_id"`
		} `json:"chunks"`
	}
	if err := json.Unmarshal(env.Result, &block); err != nil {
		t.Fatalf("decode block %d: %v", height, err)
	}
	reqs = append(reqs, Request{"block", map[string]any{"block_id": block.Header.Hash}})
	for _, c := range block.Chunks {
		reqs = append(reqs,
			Request{"chunk", map[string]any{"block_id": height, "shard_id": c.ShardID}},
			Request{"chunk", map[string]any{"block_id": block.Header.Hash, "shard_id": c.ShardID}},
			Request{"chunk", map[string]any{"chunk_id": c.ChunkHash}},
		)
	}
	reqs = append(reqs, Request{"chunk", map[string]any{"block_id": height, "shard_id": len(block.Chunks) + 7}})
	return reqs
}

// ContractViews are view calls per contract code hash, from the fixture
// descriptors in testdata/fixtures/wasm.
func ContractViews(t testing.TB) map[string][]Request {
	t.Helper()
	files := fixture.Glob(t, "wasm/*.json")
	views := map[string][]Request{}
	for _, f := range files {
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
			args := m.ArgsJSON
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage("{}")
			}
			views[d.CodeHash] = append(views[d.CodeHash], Request{"call_function", map[string]any{
				"method_name": m.Name, "args_base64": base64.StdEncoding.EncodeToString(args),
			}})
		}
	}
	return views
}

// GenesisState reads the accounts, keys and contracts of a genesis file.
type GenesisState struct {
	Accounts  []string
	Keys      map[string][]string // account → public keys
	Contracts map[string]string   // account → code hash
}

func ReadGenesis(t testing.TB, path string) GenesisState {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read genesis: %v", err)
	}
	var g near.GenesisFile
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("decode genesis: %v", err)
	}
	s := GenesisState{Keys: map[string][]string{}, Contracts: map[string]string{}}
	for _, r := range g.Records {
		switch {
		case r.Account != nil:
			s.Accounts = append(s.Accounts, r.Account.AccountID)
		case r.AccessKey != nil:
			s.Keys[r.AccessKey.AccountID] = append(s.Keys[r.AccessKey.AccountID], r.AccessKey.PublicKey)
		case r.Contract != nil:
			s.Contracts[r.Contract.AccountID] = near.HashOf(r.Contract.Code).String()
		}
	}
	sort.Strings(s.Accounts)
	return s
}

// With returns params plus the block selector.
func With(params map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(params)+len(kv)/2)
	for k, v := range params {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// TouchedAccounts returns the accounts the simulator's block effects name
// at height (none for a skipped height).
func TouchedAccounts(t testing.TB, sim *Client, height uint64) []string {
	t.Helper()
	env, err := sim.Call("EXPERIMENTAL_changes_in_block", map[string]any{"block_id": height})
	if err != nil {
		t.Fatalf("changes_in_block %d: %v", height, err)
	}
	var effects near.BlockEffectsView
	if env.Result == nil || json.Unmarshal(env.Result, &effects) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range effects.Changes {
		if !seen[c.AccountID] {
			seen[c.AccountID] = true
			out = append(out, c.AccountID)
		}
	}
	return out
}

// AccountRequests are the per-account reads at one height.
func AccountRequests(height uint64, account string, keys []string) []Request {
	at := []any{"block_id", height}
	ids := []string{account}
	reqs := []Request{
		{"query", With(map[string]any{"request_type": "view_account", "account_id": account}, at...)},
		{"query", With(map[string]any{"request_type": "view_access_key_list", "account_id": account}, at...)},
		{"query", With(map[string]any{"request_type": "view_code", "account_id": account}, at...)},
		{"query", With(map[string]any{"request_type": "view_state", "account_id": account, "prefix_base64": ""}, at...)},
		{"changes", With(map[string]any{"changes_type": "account_changes", "account_ids": ids}, at...)},
		{"EXPERIMENTAL_changes", With(map[string]any{"changes_type": "all_access_key_changes", "account_ids": ids}, at...)},
		{"changes", With(map[string]any{"changes_type": "contract_code_changes", "account_ids": ids}, at...)},
		{"changes", With(map[string]any{"changes_type": "data_changes", "account_ids": ids, "key_prefix_base64": ""}, at...)},
	}
	for _, k := range keys {
		reqs = append(reqs,
			Request{"query", With(map[string]any{"request_type": "view_access_key", "account_id": account, "public_key": k}, at...)},
			Request{"changes", With(map[string]any{"changes_type": "single_access_key_changes",
				"keys": []map[string]string{{"account_id": account, "public_key": k}}}, at...)},
		)
	}
	return reqs
}

// EveryMethodRequests are the differential test's requests over the chain
// sim serves: per height block effects, gas price and protocol config, the
// account reads of the accounts the height touched (every genesis account
// every 40 heights), contract views, transactions and receipts; then the
// methods without a height and the malformed requests. It also returns how
// many of the congestion levels asked the simulator answers above zero.
func EveryMethodRequests(t testing.TB, sim *Client, shape ChainShape, genesis GenesisState) ([]Request, int) {
	t.Helper()
	views := ContractViews(t)
	global := newGlobalContracts()
	var reqs []Request
	congested := 0
	for h := shape.GenesisHeight; h <= shape.Head+2; h++ {
		at := map[string]any{"block_id": h}
		reqs = append(reqs,
			Request{"block_effects", at},
			Request{"EXPERIMENTAL_changes_in_block", at},
			Request{"gas_price", []any{h}},
			Request{"gas_price", at},
			Request{"EXPERIMENTAL_protocol_config", at},
		)
		accounts := TouchedAccounts(t, sim, h)
		if (h-shape.GenesisHeight)%40 == 0 {
			accounts = genesis.Accounts
		}
		for _, a := range accounts {
			reqs = append(reqs, AccountRequests(h, a, genesis.Keys[a])...)
			if hash, ok := genesis.Contracts[a]; ok {
				for _, v := range views[hash] {
					reqs = append(reqs, Request{"query", With(v.Params.(map[string]any),
						"request_type", "call_function", "account_id", a, "block_id", h)})
				}
			}
		}
		chunks := NewChunks(t, sim, h)
		reqs = append(reqs, TxRequests(chunks)...)
		if err := global.see(chunks); err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		if (h-shape.GenesisHeight)%3 == 0 || h > shape.Head {
			reqs = append(reqs, global.requests(h)...)
		}
		if (h-shape.GenesisHeight)%5 == 0 || h > shape.Head {
			more, nonzero := CongestionRequests(t, sim, h)
			reqs, congested = append(reqs, more...), congested+nonzero
		}
	}
	someAccount := genesis.Accounts[0]
	reqs = append(reqs,
		Request{"genesis_config", nil},
		Request{"EXPERIMENTAL_genesis_config", nil},
		Request{"health", nil},
		Request{"validators", []any{nil}},
		Request{"gas_price", []any{nil}},
		Request{"gas_price", map[string]any{}},
		Request{"block", map[string]any{"finality": "near-final"}},
		Request{"block", map[string]any{"finality": "optimistic"}},
		Request{"query", map[string]any{"request_type": "view_account", "account_id": someAccount, "finality": "final"}},
		Request{"EXPERIMENTAL_protocol_config", map[string]any{"finality": "final"}},
	)
	return append(reqs, MalformedRequests(someAccount, shape.Head)...), congested
}

// LogTally logs how many results and errors each kind of request got.
func LogTally(t testing.TB, tally map[string]*Outcome) {
	t.Helper()
	kinds := make([]string, 0, len(tally))
	for k := range tally {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("%-45s results %5d  errors %5d  mismatches %5d", k, tally[k].Results, tally[k].Errors, tally[k].Mismatches)
	}
}

// RequireEveryMethod fails unless every kind EveryMethodRequests sends got
// at least one result, and some congestion level (congested of those
// asked) above zero. The kinds in except need none (validators, say, when
// the servers compared forward nothing).
func RequireEveryMethod(t testing.TB, tally map[string]*Outcome, congested int, except ...string) {
	t.Helper()
	kinds := slices.DeleteFunc([]string{"block_effects", "EXPERIMENTAL_changes_in_block", "gas_price",
		"EXPERIMENTAL_protocol_config", "genesis_config", "validators", "tx", "EXPERIMENTAL_tx_status",
		"query/view_account", "query/view_access_key_list", "query/view_access_key", "query/view_code",
		"query/view_state", "query/call_function", "EXPERIMENTAL_receipt", "EXPERIMENTAL_receipt_to_tx", "changes/account_changes", "changes/data_changes",
		"changes/contract_code_changes", "changes/single_access_key_changes",
		"EXPERIMENTAL_changes/all_access_key_changes", "EXPERIMENTAL_congestion_level"},
		func(k string) bool { return slices.Contains(except, k) })
	RequireResults(t, tally, kinds...)
	if congested == 0 {
		t.Errorf("every congestion level the simulator answered is zero")
	}
	if o := tally["EXPERIMENTAL_congestion_level"]; o != nil {
		t.Logf("%d of the chunks asked have a nonzero congestion level (%d congestion results compared)", congested, o.Results)
	}
}

// CongestionRequests asks EXPERIMENTAL_congestion_level for every shard of
// a height (by block height, by [[block hash, shard]] and by chunk id) and
// for a shard it does not have; for a height without a block, its shard 0.
// It returns how many of the levels the simulator answers are above zero.
func CongestionRequests(t testing.TB, sim *Client, height uint64) ([]Request, int) {
	t.Helper()
	env, err := sim.Call("block", map[string]any{"block_id": height})
	if err != nil || env.Result == nil {
		return []Request{{"EXPERIMENTAL_congestion_level", map[string]any{"block_id": height, "shard_id": 0}}}, 0
	}
	var block near.BlockView
	if err := json.Unmarshal(env.Result, &block); err != nil {
		t.Fatalf("decode block %d: %v", height, err)
	}
	reqs := []Request{{"EXPERIMENTAL_congestion_level", map[string]any{"block_id": height, "shard_id": len(block.Chunks)}}}
	nonzero := 0
	for _, c := range block.Chunks {
		reqs = append(reqs,
			Request{"EXPERIMENTAL_congestion_level", map[string]any{"block_id": height, "shard_id": c.ShardID}},
			Request{"EXPERIMENTAL_congestion_level", []any{[]any{block.Header.Hash, c.ShardID}}},
			Request{"EXPERIMENTAL_congestion_level", map[string]any{"chunk_id": c.ChunkHash}})
		env, err := sim.Call("EXPERIMENTAL_congestion_level", map[string]any{"chunk_id": c.ChunkHash})
		if err != nil || env.Result == nil {
			t.Fatalf("congestion level of chunk %s from sim: %v %s", c.ChunkHash, err, env.Error)
		}
		var level near.CongestionLevelView
		if err := json.Unmarshal(env.Result, &level); err != nil {
			t.Fatalf("decode congestion level %s: %v", env.Result, err)
		}
		if level.CongestionLevel > 0 {
			nonzero++
		}
	}
	return reqs, nonzero
}

// NewChunks returns the chunks new at a height (none for a height without
// a block), as the simulator serves them.
func NewChunks(t testing.TB, sim *Client, height uint64) []near.ChunkView {
	t.Helper()
	env, err := sim.Call("block", map[string]any{"block_id": height})
	if err != nil || env.Result == nil {
		return nil
	}
	var block near.BlockView
	if err := json.Unmarshal(env.Result, &block); err != nil {
		t.Fatalf("decode block %d: %v", height, err)
	}
	var chunks []near.ChunkView
	for _, c := range block.Chunks {
		if c.HeightIncluded != height {
			continue
		}
		env, err := sim.Call("chunk", map[string]any{"chunk_id": c.ChunkHash})
		if err != nil || env.Result == nil {
			t.Fatalf("chunk %s from sim: %v %s", c.ChunkHash, err, env.Error)
		}
		var chunk near.ChunkView
		if err := json.Unmarshal(env.Result, &chunk); err != nil {
			t.Fatalf("decode chunk %s: %v", c.ChunkHash, err)
		}
		chunks = append(chunks, chunk)
	}
	return chunks
}

// TxRequests asks tx and EXPERIMENTAL_tx_status for every transaction in
// chunks, and EXPERIMENTAL_receipt for every receipt in them.
func TxRequests(chunks []near.ChunkView) []Request {
	var reqs []Request
	for _, chunk := range chunks {
		for _, tx := range chunk.Transactions {
			reqs = append(reqs,
				Request{"tx", map[string]any{"tx_hash": tx.Hash, "sender_account_id": tx.SignerID}},
				Request{"EXPERIMENTAL_tx_status", map[string]any{"tx_hash": tx.Hash, "sender_account_id": tx.SignerID, "wait_until": "FINAL"}},
				Request{"tx", []any{tx.Hash, tx.SignerID}},
			)
		}
		for _, r := range chunk.Receipts {
			reqs = append(reqs,
				Request{"EXPERIMENTAL_receipt", map[string]any{"receipt_id": r.ReceiptID}},
				Request{"EXPERIMENTAL_receipt_to_tx", map[string]any{"receipt_id": r.ReceiptID}})
		}
	}
	return reqs
}

// MalformedRequests are bad inputs; both nodes must refuse them alike.
func MalformedRequests(account string, head uint64) []Request {
	return []Request{
		{"query", map[string]any{"request_type": "view_account", "account_id": account, "block_id": head, "finality": "final"}},
		{"query", map[string]any{"request_type": "view_account", "account_id": "Not A Valid Account!", "finality": "final"}},
		{"query", map[string]any{"request_type": "view_account", "account_id": account, "block_id": -5}},
		{"query", map[string]any{"request_type": "view_account", "account_id": account, "block_id": "18446744073709551616"}},
		{"query", map[string]any{"request_type": "view_state", "account_id": account, "prefix_base64": "%%%", "finality": "final"}},
		{"query", map[string]any{"request_type": "view_state", "account_id": account, "prefix_base64": "JyBPUiAxPTE7LS0=", "finality": "final"}},
		{"query", map[string]any{"request_type": "call_function", "account_id": account, "method_name": "x", "finality": "final"}},
		{"query", map[string]any{"request_type": "view_nothing", "account_id": account, "finality": "final"}},
		{"query", map[string]any{"request_type": "view_access_key", "account_id": account, "public_key": "ed25519:zzz", "finality": "final"}},
		{"query", map[string]any{"request_type": "view_account", "account_id": "nobody-here.near", "finality": "final"}},
		{"query", map[string]any{"request_type": "view_account", "account_id": account, "block_id": head + 1000}},
		{"query", []any{"view_account", account}},
		{"changes", map[string]any{"changes_type": "account_changes", "account_ids": "x", "finality": "final"}},
		{"changes", map[string]any{"changes_type": "bogus_changes", "account_ids": []string{account}, "finality": "final"}},
		{"block", map[string]any{"block_id": 3.5}},
		{"block", map[string]any{"block_id": "notahash"}},
		{"block", map[string]any{"finality": "soon"}},
		{"block", []any{}},
		{"chunk", map[string]any{"chunk_id": 7}},
		{"EXPERIMENTAL_congestion_level", map[string]any{"chunk_id": "11111111111111111111111111111111"}},
		{"EXPERIMENTAL_congestion_level", map[string]any{"chunk_id": "nope"}},
		{"EXPERIMENTAL_congestion_level", map[string]any{"block_id": head}},
		{"EXPERIMENTAL_congestion_level", map[string]any{"block_id": head + 1000, "shard_id": 0}},
		{"EXPERIMENTAL_congestion_level", map[string]any{"block_id": head, "shard_id": -1}},
		{"gas_price", []any{1, 2}},
		{"gas_price", "x"},
		{"tx", map[string]any{"tx_hash": "11111111111111111111111111111111", "sender_account_id": account}},
		{"tx", map[string]any{"tx_hash": "nope", "sender_account_id": account}},
		{"EXPERIMENTAL_changes_in_block", map[string]any{"block_id": head + 1000}},
		{"EXPERIMENTAL_nothing", map[string]any{}},
	}
}
