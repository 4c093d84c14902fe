package rpcserve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzHandler feeds arbitrary bodies and paths to the handler, through
// request decoding, batching (with a response limit a few answers exceed),
// parameter parsing and dispatch to a fake
// backend whose heights 7, 8 and 9 fail with a private error, panic and
// block. Every answer must be a JSON-RPC envelope (or an empty health
// answer) of valid UTF-8 with a documented status, never a panic, a hang
// past the request timeout, the backend's private error text, or an error
// that repeats more than a clipped echo of the input besides its id. CI
// runs it for a bounded time:
//
//	go test -run '^$' -fuzz '^FuzzHandler$' -fuzztime 20s ./rpcserve
//
// Seeds: the inline list below plus testdata/fuzz/FuzzHandler.
func FuzzHandler(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":3}}`,
		`{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":8}}`,
		`{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":9}}`,
		`{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":7}}`,
		`[{"method":"gas_price","params":[3]},{"method":"query","params":{"request_type":"view_state","account_id":"a.near","prefix_base64":"","finality":"final"}}]`,
		`{"method":"changes","params":{"changes_type":"single_access_key_changes","keys":[{"account_id":"a.near","public_key":"ed25519:1"}],"block_id":1}}`,
		`{"method":"query","params":{"request_type":"call_function","account_id":"a.near","method_name":"m","args_base64":"e30=","block_id":2}}`,
		`{"method":"query","params":["account/a.near",""]}`,
		`{"method":"chunk","params":{"block_id":2,"shard_id":0}}`,
		`{"method":"EXPERIMENTAL_tx_status","params":{"tx_hash":"11111111111111111111111111111111","sender_account_id":"a.near"}}`,
		`{"method":"tx","params":["x","y"]}`, `[]`, `{`, `"x"`, ``, `null`, `[[[]]]`,
		`{"jsonrpc":"2.0","id":{"a":[1]},"method":"status","params":[]}`,
		`{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":18446744073709551616}}`,
	} {
		f.Add("/", seed)
		f.Add("/block", seed)
	}
	// Path-style params alone, as an object or positionally.
	for _, seed := range [][2]string{
		{"/block", `{"block_id":8}`}, {"/block", `{"block_id":9}`}, {"/block", `{"id":1,"finality":"final"}`},
		{"/gas_price", `[null]`}, {"/chunk", `[[7,0]]`}, {"/query", `{"request_type":"view_account","account_id":"a.near","block_id":7}`},
		{"/status", `[]`}, {"/validators", `{}`},
	} {
		f.Add(seed[0], seed[1])
	}
	h := newTestHandler(f, &fakeBackend{}, Config{MaxBatch: 5, MaxBodyBytes: 4096, MaxResponseBytes: 400, RequestTimeout: 5 * time.Millisecond}, nil)
	f.Fuzz(func(t *testing.T, path, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " ?#%\x00\r\n\t") {
			return
		}
		if _, err := url.ParseRequestURI("http://x" + path); err != nil {
			return // not a path an HTTP request can carry
		}
		req := httptest.NewRequest(http.MethodPost, "http://x"+path, strings.NewReader(body))
		rec := httptest.NewRecorder()
		began := time.Now()
		h.ServeHTTP(rec, req)
		if took := time.Since(began); took > 2*time.Second {
			t.Fatalf("took %s for %q %q", took, path, body)
		}
		switch rec.Code {
		case http.StatusOK, http.StatusNotFound, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q %q: %s", rec.Code, path, body, rec.Body.String())
		}
		out := rec.Body.Bytes()
		if bytes.Contains(out, []byte("secret database detail")) {
			t.Fatalf("private error text answered for %q %q: %s", path, body, out)
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("invalid JSON or UTF-8 for %q %q: %q", path, body, out)
		}
		var answers []json.RawMessage
		if len(bytes.TrimSpace(out)) > 0 && bytes.TrimSpace(out)[0] == '[' {
			if err := json.Unmarshal(out, &answers); err != nil || len(answers) == 0 {
				t.Fatalf("batch answer %s for %q %q", out, path, body)
			}
		} else {
			answers = []json.RawMessage{out}
		}
		for _, a := range answers {
			var env struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
				Error   *struct {
					Name  string `json:"name"`
					Cause *struct {
						Name string `json:"name"`
					} `json:"cause"`
				} `json:"error"`
			}
			if err := json.Unmarshal(a, &env); err != nil {
				t.Fatalf("answer %s is not an envelope for %q %q: %v", a, path, body, err)
			}
			if env.JSONRPC != "2.0" || (env.Result == nil) == (env.Error == nil) && !bytes.Contains(a, []byte(`"result":null`)) {
				t.Fatalf("answer %s is not a JSON-RPC 2.0 envelope for %q %q", a, path, body)
			}
			if env.Error != nil && (env.Error.Name == "" || env.Error.Cause == nil || env.Error.Cause.Name == "") {
				t.Fatalf("error without name or cause %s for %q %q", a, path, body)
			}
			if env.Error != nil && len(a)-len(env.ID) > maxErrorAnswer {
				t.Fatalf("a %d-byte error for %q %q: %.300s", len(a), path, body, a)
			}
		}
	})
}
