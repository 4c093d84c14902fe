package e2e

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/near"
)

// contractViews are view calls per contract code hash, from the fixture
// descriptors in testdata/fixtures/wasm.
func contractViews(t *testing.T) map[string][]request {
	t.Helper()
	files := fixture.Glob(t, "wasm/*.json")
	views := map[string][]request{}
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
			views[d.CodeHash] = append(views[d.CodeHash], request{"call_function", map[string]any{
				"method_name": m.Name, "args_base64": base64.StdEncoding.EncodeToString(args),
			}})
		}
	}
	return views
}

// genesisState reads the accounts, keys and contracts of a genesis file.
type genesisState struct {
	accounts  []string
	keys      map[string][]string // account → public keys
	contracts map[string]string   // account → code hash
}

func readGenesis(t *testing.T, path string) genesisState {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read genesis: %v", err)
	}
	var g near.GenesisFile
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("decode genesis: %v", err)
	}
	s := genesisState{keys: map[string][]string{}, contracts: map[string]string{}}
	for _, r := range g.Records {
		switch {
		case r.Account != nil:
			s.accounts = append(s.accounts, r.Account.AccountID)
		case r.AccessKey != nil:
			s.keys[r.AccessKey.AccountID] = append(s.keys[r.AccessKey.AccountID], r.AccessKey.PublicKey)
		case r.Contract != nil:
			s.contracts[r.Contract.AccountID] = near.HashOf(r.Contract.Code).String()
		}
	}
	sort.Strings(s.accounts)
	return s
}

// with returns params plus the block selector.
func with(params map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(params)+len(kv)/2)
	for k, v := range params {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// touchedAccounts returns the accounts the simulator's block effects name
// at height (none for a skipped height).
func touchedAccounts(t *testing.T, sim *client, height uint64) []string {
	t.Helper()
	env, err := sim.call("EXPERIMENTAL_changes_in_block", map[string]any{"block_id": height})
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

// accountRequests are the per-account reads at one height.
func accountRequests(height uint64, account string, keys []string) []request {
	at := []any{"block_id", height}
	ids := []string{account}
	reqs := []request{
		{"query", with(map[string]any{"request_type": "view_account", "account_id": account}, at...)},
		{"query", with(map[string]any{"request_type": "view_access_key_list", "account_id": account}, at...)},
		{"query", with(map[string]any{"request_type": "view_code", "account_id": account}, at...)},
		{"query", with(map[string]any{"request_type": "view_state", "account_id": account, "prefix_base64": ""}, at...)},
		{"changes", with(map[string]any{"changes_type": "account_changes", "account_ids": ids}, at...)},
		{"EXPERIMENTAL_changes", with(map[string]any{"changes_type": "all_access_key_changes", "account_ids": ids}, at...)},
		{"changes", with(map[string]any{"changes_type": "contract_code_changes", "account_ids": ids}, at...)},
		{"changes", with(map[string]any{"changes_type": "data_changes", "account_ids": ids, "key_prefix_base64": ""}, at...)},
	}
	for _, k := range keys {
		reqs = append(reqs,
			request{"query", with(map[string]any{"request_type": "view_access_key", "account_id": account, "public_key": k}, at...)},
			request{"changes", with(map[string]any{"changes_type": "single_access_key_changes",
				"keys": []map[string]string{{"account_id": account, "public_key": k}}}, at...)},
		)
	}
	return reqs
}

// TestEveryMethodMatchesTheSimulator is the differential test: a
// simulated chain (several shards, skipped heights, missing chunks, real
// contracts) is indexed from its genesis, and for every indexed height the
// same requests (every method, every param form, malformed ones) go to the
// simulator and to serve; every result and every error must be identical.
func TestEveryMethodMatchesTheSimulator(t *testing.T) {
	const maxHeight = 160
	dbURL := freshDatabase(t)
	genesisPath := filepath.Join(t.TempDir(), "genesis.json")

	// Protocol 77: global contracts are deployed, distributed and used.
	simAddr := start(t, "sim", "--listen", anyPort, "--seed", "5", "--shards", "4", "--block-time", "0",
		"--max-height", strconv.Itoa(maxHeight), "--genesis-out", genesisPath, "--protocol-version", "77",
		"--yield-timeout", yieldTimeout).listenAddr(t, "simulator listening")
	sim := newClient(simAddr)
	sim.waitReady(t, 30*time.Second)
	shape := readShape(t, sim, maxHeight-20)
	genesis := readGenesis(t, genesisPath)

	if out, err := runToEnd(t, 5*time.Minute, "index", "--database-url", dbURL, "--genesis", genesisPath,
		"--upstream", "http://"+simAddr, "--to", strconv.FormatUint(shape.head, 10)); err != nil {
		t.Fatalf("nearline index: %v\n%s", err, tail(out, 40))
	}
	serveAddr := start(t, "serve", "--database-url", dbURL, "--listen", anyPort, "--upstream", "http://"+simAddr).listenAddr(t, "serving JSON-RPC")
	serve := newClient(serveAddr)
	serve.waitReady(t, 30*time.Second)

	reqs, congested := everyMethodRequests(t, sim, shape, genesis)
	for h := shape.genesisHeight; h <= shape.head; h += 10 {
		reqs = append(reqs, yieldViewRequests(h)...)
	}
	requireProhibitedInView(t, sim, shape.head)
	tally := compare(t, sim, serve, reqs)
	logTally(t, tally)
	t.Logf("compared %d requests over heights %d..%d", total(tally), shape.genesisHeight, shape.head+2)
	requireEveryMethod(t, tally, congested)
	requireResults(t, tally, "query/view_global_contract_code", "query/view_global_contract_code_by_account_id")
	// Relayed transactions and yields are in the chain compared.
	traffic := countRelayedAndYielded(t, sim, shape)
	traffic.require(t)
	requireYieldOutcomesStored(t, dbURL, traffic.executedYields)
}

// everyMethodRequests are the differential test's requests over the chain
// sim serves: per height block effects, gas price and protocol config, the
// account reads of the accounts the height touched (every genesis account
// every 40 heights), contract views, transactions and receipts; then the
// methods without a height and the malformed requests. It also returns how
// many of the congestion levels asked the simulator answers above zero.
func everyMethodRequests(t *testing.T, sim *client, shape chainShape, genesis genesisState) ([]request, int) {
	t.Helper()
	views := contractViews(t)
	global := newGlobalContracts()
	var reqs []request
	congested := 0
	for h := shape.genesisHeight; h <= shape.head+2; h++ {
		at := map[string]any{"block_id": h}
		reqs = append(reqs,
			request{"block_effects", at},
			request{"EXPERIMENTAL_changes_in_block", at},
			request{"gas_price", []any{h}},
			request{"gas_price", at},
			request{"EXPERIMENTAL_protocol_config", at},
		)
		accounts := touchedAccounts(t, sim, h)
		if (h-shape.genesisHeight)%40 == 0 {
			accounts = genesis.accounts
		}
		for _, a := range accounts {
			reqs = append(reqs, accountRequests(h, a, genesis.keys[a])...)
			if hash, ok := genesis.contracts[a]; ok {
				for _, v := range views[hash] {
					reqs = append(reqs, request{"query", with(v.params.(map[string]any),
						"request_type", "call_function", "account_id", a, "block_id", h)})
				}
			}
		}
		chunks := newChunks(t, sim, h)
		reqs = append(reqs, txRequests(chunks)...)
		if err := global.see(chunks); err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		if (h-shape.genesisHeight)%3 == 0 || h > shape.head {
			reqs = append(reqs, global.requests(h)...)
		}
		if (h-shape.genesisHeight)%5 == 0 || h > shape.head {
			more, nonzero := congestionRequests(t, sim, h)
			reqs, congested = append(reqs, more...), congested+nonzero
		}
	}
	someAccount := genesis.accounts[0]
	reqs = append(reqs,
		request{"genesis_config", nil},
		request{"EXPERIMENTAL_genesis_config", nil},
		request{"health", nil},
		request{"validators", []any{nil}},
		request{"gas_price", []any{nil}},
		request{"gas_price", map[string]any{}},
		request{"block", map[string]any{"finality": "near-final"}},
		request{"block", map[string]any{"finality": "optimistic"}},
		request{"query", map[string]any{"request_type": "view_account", "account_id": someAccount, "finality": "final"}},
		request{"EXPERIMENTAL_protocol_config", map[string]any{"finality": "final"}},
	)
	return append(reqs, malformedRequests(someAccount, shape.head)...), congested
}

// logTally logs how many results and errors each kind of request got.
func logTally(t *testing.T, tally map[string]*outcome) {
	t.Helper()
	kinds := make([]string, 0, len(tally))
	for k := range tally {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("%-45s results %5d  errors %5d  mismatches %5d", k, tally[k].results, tally[k].errors, tally[k].mismatches)
	}
}

// requireEveryMethod fails unless every kind everyMethodRequests sends got
// at least one result, and some congestion level (congested of those
// asked) above zero.
func requireEveryMethod(t *testing.T, tally map[string]*outcome, congested int) {
	t.Helper()
	requireResults(t, tally, "block_effects", "EXPERIMENTAL_changes_in_block", "gas_price",
		"EXPERIMENTAL_protocol_config", "genesis_config", "validators", "tx", "EXPERIMENTAL_tx_status",
		"query/view_account", "query/view_access_key_list", "query/view_access_key", "query/view_code",
		"query/view_state", "query/call_function", "EXPERIMENTAL_receipt", "EXPERIMENTAL_receipt_to_tx", "changes/account_changes", "changes/data_changes",
		"changes/contract_code_changes", "changes/single_access_key_changes",
		"EXPERIMENTAL_changes/all_access_key_changes", "EXPERIMENTAL_congestion_level")
	if congested == 0 {
		t.Errorf("every congestion level the simulator answered is zero")
	}
	if o := tally["EXPERIMENTAL_congestion_level"]; o != nil {
		t.Logf("%d of the chunks asked have a nonzero congestion level (%d congestion results compared)", congested, o.results)
	}
}

// congestionRequests asks EXPERIMENTAL_congestion_level for every shard of
// a height (by block height, by [[block hash, shard]] and by chunk id) and
// for a shard it does not have; for a height without a block, its shard 0.
// It returns how many of the levels the simulator answers are above zero.
func congestionRequests(t *testing.T, sim *client, height uint64) ([]request, int) {
	t.Helper()
	env, err := sim.call("block", map[string]any{"block_id": height})
	if err != nil || env.Result == nil {
		return []request{{"EXPERIMENTAL_congestion_level", map[string]any{"block_id": height, "shard_id": 0}}}, 0
	}
	var block near.BlockView
	if err := json.Unmarshal(env.Result, &block); err != nil {
		t.Fatalf("decode block %d: %v", height, err)
	}
	reqs := []request{{"EXPERIMENTAL_congestion_level", map[string]any{"block_id": height, "shard_id": len(block.Chunks)}}}
	nonzero := 0
	for _, c := range block.Chunks {
		reqs = append(reqs,
			request{"EXPERIMENTAL_congestion_level", map[string]any{"block_id": height, "shard_id": c.ShardID}},
			request{"EXPERIMENTAL_congestion_level", []any{[]any{block.Header.Hash, c.ShardID}}},
			request{"EXPERIMENTAL_congestion_level", map[string]any{"chunk_id": c.ChunkHash}})
		env, err := sim.call("EXPERIMENTAL_congestion_level", map[string]any{"chunk_id": c.ChunkHash})
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

// newChunks returns the chunks new at a height (none for a height without
// a block), as the simulator serves them.
func newChunks(t *testing.T, sim *client, height uint64) []near.ChunkView {
	t.Helper()
	env, err := sim.call("block", map[string]any{"block_id": height})
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
		env, err := sim.call("chunk", map[string]any{"chunk_id": c.ChunkHash})
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

// txRequests asks tx and EXPERIMENTAL_tx_status for every transaction in
// chunks, and EXPERIMENTAL_receipt for every receipt in them.
func txRequests(chunks []near.ChunkView) []request {
	var reqs []request
	for _, chunk := range chunks {
		for _, tx := range chunk.Transactions {
			reqs = append(reqs,
				request{"tx", map[string]any{"tx_hash": tx.Hash, "sender_account_id": tx.SignerID}},
				request{"EXPERIMENTAL_tx_status", map[string]any{"tx_hash": tx.Hash, "sender_account_id": tx.SignerID, "wait_until": "FINAL"}},
				request{"tx", []any{tx.Hash, tx.SignerID}},
			)
		}
		for _, r := range chunk.Receipts {
			reqs = append(reqs,
				request{"EXPERIMENTAL_receipt", map[string]any{"receipt_id": r.ReceiptID}},
				request{"EXPERIMENTAL_receipt_to_tx", map[string]any{"receipt_id": r.ReceiptID}})
		}
	}
	return reqs
}

// malformedRequests are bad inputs; both nodes must refuse them alike.
func malformedRequests(account string, head uint64) []request {
	return []request{
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
