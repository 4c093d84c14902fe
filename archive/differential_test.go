package archive_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/basestate"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/store/storetest"
)

// TestArchiveMatchesSimulator indexes a simulated chain into a fresh archive
// and asks both the same questions through the same protocol layer: every
// answer (result or error) must be byte-identical.
func TestArchiveMatchesSimulator(t *testing.T) {
	t.Parallel()
	outcomes := compareWithSimulator(t, sim.Config{Seed: 11, Shards: 3, TxsPerBlock: 6, SkipRate: 0.1, MissingChunkRate: 0.1, MaxHeight: 40}, nil)
	// The comparison must cover real answers, not only errors.
	for _, kind := range []string{"block ok", "chunk ok", "query/call_function ok", "query/view_state ok", "tx ok", "changes ok",
		"EXPERIMENTAL_receipt ok", "EXPERIMENTAL_receipt_to_tx ok", "EXPERIMENTAL_congestion_level ok",
		"EXPERIMENTAL_congestion_level UNKNOWN_CHUNK", "EXPERIMENTAL_congestion_level INVALID_SHARD_ID",
		"EXPERIMENTAL_congestion_level UNKNOWN_BLOCK", congestedOutcome} {
		require.Positive(t, outcomes[kind], "no %q among %v", kind, outcomes)
	}
	t.Logf("%d of %d congestion levels are not zero", outcomes[congestedOutcome], outcomes["EXPERIMENTAL_congestion_level ok"])
}

// congestedOutcome counts, among compareWithSimulator's outcomes, the
// congestion levels above zero.
const congestedOutcome = "congestion level above 0"

// compareWithSimulator indexes the chain cfg describes (up to
// cfg.MaxHeight) into a fresh archive and asks both the same questions
// (differentialRequests, then more's) through the same protocol layer:
// every answer (result or error) must be byte-identical. It returns how
// many answers of each outcome it compared.
func compareWithSimulator(t *testing.T, cfg sim.Config, more func(simH http.Handler, head uint64) []string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	head := cfg.MaxHeight

	node, err := sim.New(ctx, cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = node.Close(context.Background()) })
	require.NoError(t, node.ProduceTo(ctx, head))
	upstream := httptest.NewServer(node.Handler())
	t.Cleanup(upstream.Close)

	st := storetest.NewStore(t)
	genesisPath := filepath.Join(t.TempDir(), "genesis.json")
	require.NoError(t, node.WriteGenesis(genesisPath))
	f, err := os.Open(genesisPath)
	require.NoError(t, err)
	_, err = basestate.LoadGenesis(ctx, f, st, nil)
	f.Close()
	require.NoError(t, err)
	client, err := near.NewClient(near.ClientConfig{Endpoints: []string{upstream.URL}})
	require.NoError(t, err)
	to := head
	src, err := rpcsource.NewNodeSource(client, rpcsource.NodeConfig{}, nil)
	require.NoError(t, err)
	ix, err := indexer.New(indexer.Config{To: &to}, src, st, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(ctx))

	vm, err := nearvm.New(ctx, nearvm.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = vm.Close(context.Background()) })
	simH, err := rpcserve.NewHandler(node, rpcserve.Config{}, nil)
	require.NoError(t, err)
	// What the archive does not hold goes upstream, as with `serve
	// --upstream`: a hash the chain never had, or a receipt_to_tx the
	// archive cannot answer (a receipt whose transaction had not finished
	// when the indexer stopped, or that has no outcome at all, as a global
	// contract distribution); anything else forwarded fails the test.
	var forwarded sync.Map
	forward := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &req)
		forwarded.Store(string(body), req.Method)
		simH.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
	}))
	t.Cleanup(forward.Close)
	archiveH := archiveHandler(t, st, vm, forward.URL)

	reqs := differentialRequests(t, simH, node.Genesis(), head)
	if more != nil {
		reqs = append(reqs, more(simH, head)...)
	}
	mismatches := 0
	outcomes := map[string]int{}
	for _, r := range reqs {
		want, got := post(t, simH, r), post(t, archiveH, r)
		outcomes[outcomeOf(r, want)]++
		if isCongested(want) {
			outcomes[congestedOutcome]++
		}
		if !bytes.Equal(want, got) {
			mismatches++
			if mismatches <= 20 {
				t.Errorf("%s\n sim:     %.700s\n archive: %.700s", r, want, got)
			}
		}
	}
	nForwarded := 0
	forwarded.Range(func(body, method any) bool {
		nForwarded++
		unknown := strings.Contains(body.(string), near.HashOf([]byte("nobody has this")).String())
		require.True(t, method == "EXPERIMENTAL_receipt_to_tx" || unknown, "forwarded: %s", body)
		return true
	})
	t.Logf("compared %d requests over heights 0..%d, %d mismatches, %d forwarded; outcomes %v", len(reqs), head, mismatches, nForwarded, outcomes)
	require.Zero(t, mismatches)
	require.LessOrEqual(t, nForwarded*100, len(reqs), "more than 1%% of the requests went upstream")
	return outcomes
}

// isCongested reports whether resp is a congestion level result above 0.
func isCongested(resp []byte) bool {
	var env struct {
		Result struct {
			CongestionLevel *float64 `json:"congestion_level"`
		} `json:"result"`
	}
	return json.Unmarshal(resp, &env) == nil && env.Result.CongestionLevel != nil && *env.Result.CongestionLevel > 0
}

// outcomeOf names a response for the summary: "<method> ok" or
// "<method> <CAUSE>".
func outcomeOf(req string, resp []byte) string {
	var r struct {
		Method string `json:"method"`
		Params struct {
			RequestType string `json:"request_type"`
		} `json:"params"`
	}
	_ = json.Unmarshal([]byte(req), &r)
	name := r.Method
	if r.Params.RequestType != "" {
		name += "/" + r.Params.RequestType
	}
	var env near.Response
	_ = json.Unmarshal(resp, &env)
	if env.Error != nil {
		return name + " " + env.Error.CauseName()
	}
	if bytes.Contains(env.Result, []byte(`"error":`)) && r.Method == "query" {
		return name + " legacy-error"
	}
	return name + " ok"
}

func post(t *testing.T, h http.Handler, body string) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)))
	require.Equal(t, http.StatusOK, rec.Code, body)
	return rec.Body.Bytes()
}

func request(method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "d", "method": method, "params": params})
	return string(b)
}

// genesisAccounts returns the accounts of a genesis and, per account, its
// access keys.
func genesisAccounts(genesis near.GenesisFile) (accounts map[string]bool, keys map[string][]string) {
	accounts, keys = map[string]bool{}, map[string][]string{}
	for _, r := range genesis.Records {
		switch {
		case r.Account != nil:
			accounts[r.Account.AccountID] = true
		case r.AccessKey != nil:
			keys[r.AccessKey.AccountID] = append(keys[r.AccessKey.AccountID], r.AccessKey.PublicKey)
		}
	}
	return accounts, keys
}

// differentialRequests lists, per height, the block and chunk reads, the
// block's effects and changes, state queries of the accounts it touched,
// view calls of the genesis contracts and the statuses of its transactions.
func differentialRequests(t *testing.T, simH http.Handler, genesis near.GenesisFile, head uint64) []string {
	t.Helper()
	accounts, keys := genesisAccounts(genesis)
	var reqs []string
	add := func(method string, params any) { reqs = append(reqs, request(method, params)) }
	// Every shard id any layout or chunk header has named so far is asked
	// at every height: a split shard's id, refused after its split, and a
	// child's, answered with its parent's chunk while the child's is
	// missing.
	shardIDs := map[uint64]bool{}
	unknownHash := near.HashOf([]byte("nobody has this")).String()
	add("block", map[string]any{"block_id": head + 1})
	add("block", map[string]any{"block_id": unknownHash})
	add("chunk", map[string]any{"chunk_id": unknownHash})
	add("EXPERIMENTAL_congestion_level", map[string]any{"chunk_id": unknownHash})
	add("EXPERIMENTAL_congestion_level", map[string]any{"block_id": head + 1, "shard_id": 0})
	add("gas_price", []any{nil})
	add("genesis_config", nil)
	add("block", map[string]any{"finality": "final"})

	for h := genesis.GenesisHeight; h <= head; h++ {
		at := map[string]any{"block_id": h}
		add("block", at)
		add("block_effects", at)
		add("EXPERIMENTAL_changes_in_block", at)
		add("gas_price", []any{h})
		add("EXPERIMENTAL_protocol_config", at)
		var block struct {
			Result *struct {
				Header struct {
					Hash string `json:"hash"`
				} `json:"header"`
				Chunks []struct {
					ChunkHash string `json:"chunk_hash"`
					ShardID   uint64 `json:"shard_id"`
				} `json:"chunks"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal(post(t, simH, request("block", at)), &block))
		if block.Result == nil {
			add("chunk", map[string]any{"block_id": h, "shard_id": 0})
			add("EXPERIMENTAL_congestion_level", map[string]any{"block_id": h, "shard_id": 0})
			add("query", map[string]any{"request_type": "view_account", "account_id": "status.near", "block_id": h})
			continue
		}
		add("block", map[string]any{"block_id": block.Result.Header.Hash})
		var protocol struct {
			Result struct {
				ShardLayout near.ShardLayout `json:"shard_layout"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal(post(t, simH, request("EXPERIMENTAL_protocol_config", at)), &protocol))
		for _, id := range protocol.Result.ShardLayout.ShardIDs() {
			shardIDs[id] = true
		}
		for _, c := range block.Result.Chunks {
			shardIDs[c.ShardID] = true
		}
		for _, id := range slices.Sorted(maps.Keys(shardIDs)) {
			add("chunk", map[string]any{"block_id": h, "shard_id": id})
			add("EXPERIMENTAL_congestion_level", map[string]any{"block_id": h, "shard_id": id})
			add("EXPERIMENTAL_congestion_level", []any{[]any{block.Result.Header.Hash, id}})
		}
		for _, c := range block.Result.Chunks {
			add("chunk", map[string]any{"chunk_id": c.ChunkHash})
			add("EXPERIMENTAL_congestion_level", map[string]any{"chunk_id": c.ChunkHash})
			var chunk struct {
				Result struct {
					Transactions []struct {
						Hash     string `json:"hash"`
						SignerID string `json:"signer_id"`
					} `json:"transactions"`
					Receipts []struct {
						ReceiptID string `json:"receipt_id"`
					} `json:"receipts"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal(post(t, simH, request("chunk", map[string]any{"chunk_id": c.ChunkHash})), &chunk))
			for _, tx := range chunk.Result.Transactions {
				add("tx", map[string]any{"tx_hash": tx.Hash, "sender_account_id": tx.SignerID})
				add("EXPERIMENTAL_tx_status", []string{tx.Hash, tx.SignerID})
			}
			for _, r := range chunk.Result.Receipts {
				add("EXPERIMENTAL_receipt", map[string]any{"receipt_id": r.ReceiptID})
				add("EXPERIMENTAL_receipt_to_tx", map[string]any{"receipt_id": r.ReceiptID})
			}
		}
		add("chunk", map[string]any{"block_id": h, "shard_id": len(shardIDs) + 3})
		add("EXPERIMENTAL_congestion_level", map[string]any{"block_id": h, "shard_id": len(shardIDs) + 3})

		var effects struct {
			Result struct {
				Changes []near.StateChangeKindView `json:"changes"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal(post(t, simH, request("EXPERIMENTAL_changes_in_block", at)), &effects))
		touched := map[string]bool{}
		for _, e := range effects.Result.Changes {
			touched[e.AccountID] = true
			accounts[e.AccountID] = true
		}
		ids := sortedKeys(touched)
		if len(ids) > 0 {
			for _, typ := range []string{"account_changes", "all_access_key_changes", "contract_code_changes"} {
				add("changes", map[string]any{"changes_type": typ, "account_ids": ids, "block_id": h})
			}
			add("EXPERIMENTAL_changes", map[string]any{"changes_type": "data_changes", "account_ids": ids, "key_prefix_base64": "", "block_id": h})
			var single []near.AccountPublicKey
			for _, id := range ids {
				for _, pk := range keys[id] {
					single = append(single, near.AccountPublicKey{AccountID: id, PublicKey: pk})
				}
			}
			if len(single) > 0 {
				add("changes", map[string]any{"changes_type": "single_access_key_changes", "keys": single, "block_id": h})
			}
		}
		if h%5 != 0 && h != head {
			continue
		}
		for _, id := range sortedKeys(accounts) {
			for _, typ := range []string{"view_account", "view_code", "view_access_key_list"} {
				add("query", map[string]any{"request_type": typ, "account_id": id, "block_id": h})
			}
			add("query", map[string]any{"request_type": "view_state", "account_id": id, "prefix_base64": "", "block_id": h})
			for _, pk := range keys[id] {
				add("query", map[string]any{"request_type": "view_access_key", "account_id": id, "public_key": pk, "block_id": h})
			}
		}
		for _, c := range []struct{ account, method, args string }{
			{"status.near", "get_status", `{"account_id":"alice.near"}`},
			{"ft.near", "ft_total_supply", `{}`},
			{"ft.near", "ft_metadata", `{}`},
			{"ft.near", "ft_balance_of", `{"account_id":"ft.near"}`},
			{"nft.near", "nft_total_supply", `{}`},
			{"guestbook.near", "get_messages", `{}`},
			{"status.near", "no_such_method", `{}`},
			{"ft.near", "ft_transfer", `{"receiver_id":"a.near","amount":"1"}`},
		} {
			add("query", map[string]any{"request_type": "call_function", "account_id": c.account, "method_name": c.method,
				"args_base64": base64.StdEncoding.EncodeToString([]byte(c.args)), "block_id": h})
		}
	}
	return reqs
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
