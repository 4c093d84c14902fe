package sim

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNearcoreNextRewritesEachObjectAlone checks each rule of the rewrite
// and that everything else keeps its members, order and text.
func TestNearcoreNextRewritesEachObjectAlone(t *testing.T) {
	t.Parallel()
	const gasKey = `{"TransferToGasKey":{"public_key":"ed25519:11111111111111111111111111111111","deposit":`
	for _, tc := range []struct {
		name, in, want string
	}{
		{"other objects unchanged, text kept, whitespace dropped",
			`{ "b": 1.50, "a": ["\u00e9", null, {"x": 1e3}], "s": "a\"b" }`,
			`{"b":1.50,"a":["\u00e9",null,{"x":1e3}],"s":"a\"b"}`},
		{"view_account: after storage_paid_at, before the block stamp",
			`{"amount":"100","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":182,"storage_paid_at":0,"block_height":5,"block_hash":"h"}`,
			`{"amount":"100","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":182,"storage_paid_at":0,"next_account_field":"nextb8332adb","block_height":5,"block_hash":"h"}`},
		{"another account state, other values",
			`{"amount":"100","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":183,"storage_paid_at":0}`,
			`{"amount":"100","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":183,"storage_paid_at":0,"next_account_field":null}`},
		{"account_update change: the same members as view_account",
			`{"account_id":"a.near","amount":"100","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":182,"storage_paid_at":0}`,
			`{"account_id":"a.near","amount":"100","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":182,"storage_paid_at":0,"next_account_field":"nextb8332adb"}`},
		{"genesis Account record: after version",
			`{"Account":{"account_id":"a.near","account":{"amount":"100","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":182,"version":"V1"}}}`,
			`{"Account":{"account_id":"a.near","account":{"amount":"100","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":182,"version":"V1","next_account_field":"nextb8332adb"}}}`},
		{"view_access_key: after permission, before the block stamp",
			`{"nonce":0,"permission":"FullAccess","block_height":5,"block_hash":"h"}`,
			`{"nonce":0,"permission":"FullAccess","gas_key_info":{"balance":"325","num_nonces":0},"block_height":5,"block_hash":"h"}`},
		{"access key of a list, a change or an AddKey action",
			`{"public_key":"k","access_key":{"nonce":8,"permission":{"FunctionCall":{"allowance":null,"receiver_id":"b.near","method_names":[]}}}}`,
			`{"public_key":"k","access_key":{"nonce":8,"permission":{"FunctionCall":{"allowance":null,"receiver_id":"b.near","method_names":[]}},"gas_key_info":null}}`},
		{"chunk header: after congestion_info",
			`{"chunk_hash":"D","prev_block_hash":"P","height_created":3,"shard_id":1,"congestion_info":null,"signature":"s"}`,
			`{"chunk_hash":"D","prev_block_hash":"P","height_created":3,"shard_id":1,"congestion_info":null,"proposed_split":"nexta33418f9","signature":"s"}`},
		{"transaction: nonce_index after nonce",
			`{"signer_id":"a.near","public_key":"k","nonce":7,"receiver_id":"b.near","actions":[],"signature":"s","hash":"H"}`,
			`{"signer_id":"a.near","public_key":"k","nonce":7,"nonce_index":2,"receiver_id":"b.near","actions":[],"signature":"s","hash":"H"}`},
		{"execution outcome: compute_usage at the end",
			`{"logs":[],"receipt_ids":[],"gas_burnt":5,"tokens_burnt":"0","executor_id":"a.near","status":{"SuccessValue":""},"metadata":{"version":1,"gas_profile":null}}`,
			`{"logs":[],"receipt_ids":[],"gas_burnt":5,"tokens_burnt":"0","executor_id":"a.near","status":{"SuccessValue":""},"metadata":{"version":1,"gas_profile":null},"compute_usage":5}`},
		{"action receipt: refund_to at the end",
			`{"Action":{"signer_id":"a.near","signer_public_key":"k","gas_price":"0","output_data_receivers":[],"input_data_ids":[],"actions":[],"is_promise_yield":false}}`,
			`{"Action":{"signer_id":"a.near","signer_public_key":"k","gas_price":"0","output_data_receivers":[],"input_data_ids":[],"actions":[],"is_promise_yield":false,"refund_to":"a.near"}}`},
		{"refund receipt: refund_to null",
			`{"signer_id":"system","signer_public_key":"k","gas_price":"0","actions":[]}`,
			`{"signer_id":"system","signer_public_key":"k","gas_price":"0","actions":[],"refund_to":null}`},
		{"a third of the transfers become TransferToGasKey, by deposit",
			`[{"Transfer":{"deposit":"3"}},{"Transfer":{"deposit":"4"}},{"Transfer":{"deposit":"5"}},{"Transfer":{"deposit":"4","x":1}}]`,
			`[{"Transfer":{"deposit":"3"}},` + gasKey + `"4"}},` + gasKey + `"5"}},{"Transfer":{"deposit":"4","x":1}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := nearcoreNext([]byte(tc.in))
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
			again, err := nearcoreNext([]byte(tc.in))
			require.NoError(t, err)
			require.Equal(t, string(got), string(again), "deterministic")
		})
	}
}

// TestNearcoreNextRefusesWhatIsNotJSON checks the parser's errors.
func TestNearcoreNextRefusesWhatIsNotJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `{`, `{"a"}`, `{"a":1,}`, `[1 2]`, `{"a":tru}`, `"abc`, `{} x`, `{1:2}`} {
		_, err := nearcoreNext([]byte(in))
		require.Error(t, err, "%q", in)
	}
}

// TestNearcoreNextNodeServesAndWritesTheNewerForm runs a node with
// NearcoreNext: its answers and its genesis.json carry the added members,
// the same in each, and the chain itself is the one a plain node serves.
func TestNearcoreNextNodeServesAndWritesTheNewerForm(t *testing.T) {
	t.Parallel()
	cfg := testConfig(30)
	_, plain := startNode(t, cfg)
	cfg.NearcoreNext = true
	next, srv := startNode(t, cfg)

	view := map[string]any{"request_type": "view_account", "account_id": "alice.near", "block_id": 0}
	got := rpcResult(t, srv.URL, "query", view)
	want, err := nearcoreNext(rpcResult(t, plain.URL, "query", view))
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "the plain node's answer, rewritten")
	require.Regexp(t, `"next_account_field":("next[0-9a-f]{8}"|null),"block_height":0`, string(got))

	path := filepath.Join(t.TempDir(), "genesis.json")
	require.NoError(t, next.WriteGenesis(path))
	genesis, err := os.ReadFile(path)
	require.NoError(t, err)
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, genesis))
	added := got[bytes.Index(got, []byte(`"next_account_field"`)):bytes.Index(got, []byte(`,"block_height"`))]
	record := `"account_id":"alice.near","account":{"amount":"1000000000000000000000000000000","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":182,"version":"V1",` + string(added) + "}"
	require.True(t, bytes.Contains(compact.Bytes(), []byte(record)), "alice's genesis record carries view_account's members: %s", record)
	require.Contains(t, string(genesis), "\n  \"records\": [", "genesis.json stays indented")
}
