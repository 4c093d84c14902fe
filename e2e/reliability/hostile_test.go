//go:build e2e

package reliability

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
)

// TestReliabilityHostileInput sends malformed and hostile requests to the
// real `nearline serve`: each gets NEAR's error e2ekit.Envelope with the right
// name and cause (or, for valid requests with nasty values, exactly the
// simulator's answer), never a 5xx, a Go or database error string, or a
// hang.
func TestReliabilityHostileInput(t *testing.T) {
	t.Parallel()
	genesis := filepath.Join(t.TempDir(), "genesis.json")
	chain := startSim(t, 66, 80, "--genesis-out", genesis)
	dbURL := e2ekit.FreshDatabase(t)
	if out, err := binary.Run(t, 3*time.Minute, indexArgs(dbURL, chain.url(), chain.head, "--genesis", genesis)...); err != nil {
		t.Fatalf("index: %v\n%s", err, e2ekit.Tail(out, 30))
	}
	addr := binary.Start(t, "serve", "--database-url", dbURL, "--listen", e2ekit.AnyPort).ListenAddr(t, "serving JSON-RPC")
	e2ekit.NewClient(addr).WaitReady(t, 30*time.Second)
	at := chain.head / 2

	rpc := func(method string, params any) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		return string(b)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	viewState := func(prefix string) string {
		return rpc("query", map[string]any{"request_type": "view_state", "account_id": "ft.near", "prefix_base64": prefix, "block_id": at})
	}
	const parse, rve = "PARSE_ERROR", "REQUEST_VALIDATION_ERROR"
	batchOf := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"health"},`, n), ",") + "]"
	}

	for _, tc := range []struct {
		name        string
		body        string
		status      int    // default 200
		errName     string // "" with sameAsSim: a result or error equal to the simulator's
		causeName   string
		sameAsSim   bool
		wantResults bool // sameAsSim and the answer must be a result
	}{
		{name: "invalid JSON", body: `{"jsonrpc":"2.0","id":1,"method":"block",`, errName: rve, causeName: parse},
		{name: "not UTF-8", body: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"bl\xff\xfeck\",\"params\":{}}", errName: rve, causeName: "METHOD_NOT_FOUND"},
		{name: "a JSON string", body: `"block"`, errName: rve, causeName: parse},
		{name: "wrong jsonrpc version", body: `{"jsonrpc":"1.0","id":1,"method":"block","params":{"finality":"final"}}`, errName: rve, causeName: parse},
		{name: "jsonrpc of the wrong type", body: `{"jsonrpc":2,"id":1,"method":"block","params":{"finality":"final"}}`, errName: rve, causeName: parse},
		{name: "method of the wrong type", body: `{"jsonrpc":"2.0","id":1,"method":["block"],"params":{}}`, errName: rve, causeName: parse},
		{name: "params a string", body: `{"jsonrpc":"2.0","id":1,"method":"block","params":"final"}`, errName: rve, causeName: parse},
		{name: "params an array for block", body: `{"jsonrpc":"2.0","id":1,"method":"block","params":[1,2]}`, errName: rve, causeName: parse},
		{name: "field of the wrong type", body: rpc("block", map[string]any{"finality": 7}), errName: rve, causeName: parse},
		{name: "finality and block_id", body: rpc("block", map[string]any{"finality": "final", "block_id": 3}), errName: rve, causeName: parse},
		{name: "finality and block_id in query", body: rpc("query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "finality": "final", "block_id": 3}), errName: rve, causeName: parse},
		{name: "negative height", body: rpc("block", map[string]any{"block_id": -1}), errName: rve, causeName: parse},
		{name: "height above uint64", body: `{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":1000000000000000000000000000000}}`, errName: rve, causeName: parse},
		{name: "fractional height", body: `{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":1.5}}`, errName: rve, causeName: parse},
		{name: "largest uint64 height", body: `{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":18446744073709551615}}`, sameAsSim: true},
		{name: "hash that is not base58", body: rpc("block", map[string]any{"block_id": "0OIl+/"}), errName: rve, causeName: parse},
		{name: "negative shard", body: rpc("chunk", map[string]any{"block_id": at, "shard_id": -1}), errName: rve, causeName: parse},
		{name: "invalid account id", body: rpc("query", map[string]any{"request_type": "view_account", "account_id": "Alice..near", "block_id": at}), errName: rve, causeName: parse},
		{name: "account id with quotes", body: rpc("query", map[string]any{"request_type": "view_account", "account_id": "alice.near'; DROP TABLE blocks; --", "block_id": at}), errName: rve, causeName: parse},
		{name: "account id with NUL", body: rpc("query", map[string]any{"request_type": "view_account", "account_id": "alice\x00.near", "block_id": at}), errName: rve, causeName: parse},
		{name: "account id of 10k characters", body: rpc("query", map[string]any{"request_type": "view_account", "account_id": strings.Repeat("a", 10_000), "block_id": at}), errName: rve, causeName: parse},
		{name: "invalid account id in changes", body: rpc("changes", map[string]any{"changes_type": "account_changes", "account_ids": []string{"ok.near", "' OR 1=1 --"}, "block_id": at}), errName: rve, causeName: parse},
		{name: "invalid base64 prefix", body: viewState("***"), errName: rve, causeName: parse},
		{name: "invalid base64 args", body: rpc("query", map[string]any{"request_type": "call_function", "account_id": "ft.near", "method_name": "ft_total_supply", "args_base64": "!!", "block_id": at}), errName: rve, causeName: parse},
		{name: "invalid public key", body: rpc("query", map[string]any{"request_type": "view_access_key", "account_id": "alice.near", "public_key": "ed25519:'; --", "block_id": at}), errName: rve, causeName: parse},
		{name: "unknown query request_type", body: rpc("query", map[string]any{"request_type": "drop_table", "account_id": "alice.near", "block_id": at}), errName: rve, causeName: parse},
		{name: "prefix with quotes and semicolons", body: viewState(b64("'; DROP TABLE blocks; --")), sameAsSim: true, wantResults: true},
		{name: "prefix %: a LIKE wildcard", body: viewState(b64("%")), sameAsSim: true, wantResults: true},
		{name: "prefix _: a LIKE wildcard", body: viewState(b64("_")), sameAsSim: true, wantResults: true},
		{name: "prefix backslash", body: viewState(b64(`\`)), sameAsSim: true, wantResults: true},
		{name: "prefix of every byte 0xff", body: viewState(b64("\xff\xff\xff")), sameAsSim: true, wantResults: true},
		{name: "empty prefix", body: viewState(""), sameAsSim: true, wantResults: true},
		{name: "data key with SQL metacharacters", body: rpc("changes", map[string]any{"changes_type": "data_changes", "account_ids": []string{"ft.near"}, "key_prefix_base64": b64("%' OR '1'='1"), "block_id": at}), sameAsSim: true, wantResults: true},
		{name: "contract call with SQL in args", body: rpc("query", map[string]any{"request_type": "call_function", "account_id": "ft.near", "method_name": "ft_balance_of", "args_base64": b64(`{"account_id":"x'; DROP TABLE blocks; --"}`), "block_id": at}), sameAsSim: true},
		{name: "oversized body", body: rpc("query", map[string]any{"request_type": "call_function", "account_id": "ft.near", "method_name": "x", "args_base64": strings.Repeat("QUFB", 3<<20), "block_id": at}), status: http.StatusRequestEntityTooLarge, errName: rve, causeName: parse},
		{name: "empty batch", body: `[]`, errName: rve, causeName: parse},
		{name: "oversized batch", body: batchOf(101), errName: rve, causeName: parse},
		{name: "unknown method", body: rpc("drop_everything", map[string]any{}), errName: rve, causeName: "METHOD_NOT_FOUND"},
		{name: "method name of 100k characters", body: rpc(strings.Repeat("m", 100_000), map[string]any{}), errName: rve, causeName: "METHOD_NOT_FOUND"},
		{name: "100k nested arrays", body: `{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}}`, errName: rve, causeName: parse},
		{name: "100k nested objects", body: strings.Repeat(`{"a":`, 100_000) + "1" + strings.Repeat("}", 100_000), errName: rve, causeName: parse},
		{name: "100k nested arrays as the body", body: strings.Repeat("[", 100_000), errName: rve, causeName: parse},
		{name: "empty body", body: ``, errName: rve, causeName: parse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := postRaw(t, addr, tc.body)
			want := tc.status
			if want == 0 {
				want = http.StatusOK
			}
			if status != want {
				t.Errorf("HTTP %d, want %d: %.300s", status, want, raw)
			}
			if status >= 500 {
				t.Errorf("a 5xx for hostile input: %.300s", raw)
			}
			var env struct {
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(raw, &env); err != nil {
				t.Fatalf("not a JSON-RPC e2ekit.Envelope: %v: %.300s", err, raw)
			}
			if m := leaksGoError(string(env.Error)); m != "" {
				t.Errorf("the error leaks %q: %.500s", m, env.Error)
			}
			if tc.sameAsSim {
				_, simRaw := postRaw(t, chain.addr, tc.body)
				var simEnv e2ekit.Envelope
				if err := json.Unmarshal(simRaw, &simEnv); err != nil {
					t.Fatalf("decode the simulator's answer: %v", err)
				}
				if e2ekit.Canonical(env.Result) != e2ekit.Canonical(simEnv.Result) || e2ekit.Canonical(env.Error) != e2ekit.Canonical(simEnv.Error) {
					t.Errorf("serve and sim differ:\n serve: %.400s\n sim:   %.400s", raw, simRaw)
				}
				if tc.wantResults && env.Result == nil {
					t.Errorf("want a result, got %.300s", env.Error)
				}
				return
			}
			var e struct {
				Name  string `json:"name"`
				Cause struct {
					Name string `json:"name"`
				} `json:"cause"`
				Code int `json:"code"`
			}
			if err := json.Unmarshal(env.Error, &e); err != nil || env.Error == nil {
				t.Fatalf("no error object (%v): %.300s", err, raw)
			}
			if e.Name != tc.errName || e.Cause.Name != tc.causeName {
				t.Errorf("error %s/%s, want %s/%s: %.300s", e.Name, e.Cause.Name, tc.errName, tc.causeName, env.Error)
			}
		})
	}
	// The database came through unharmed.
	c := e2ekit.NewClient(addr)
	if env, err := c.Call("block", map[string]any{"block_id": at}); err != nil || env.Result == nil {
		t.Fatalf("block %d after the hostile requests: %v %s", at, err, env.Error)
	}
}

// postRaw posts body to addr and returns the status and body; a client
// timeout (a hang) fails the test.
func postRaw(t *testing.T, addr, body string) (int, []byte) {
	t.Helper()
	hc := &http.Client{Timeout: 15 * time.Second}
	resp, err := hc.Post("http://"+addr, "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("request hung: %v", err)
		}
		t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	return resp.StatusCode, raw
}
