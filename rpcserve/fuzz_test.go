package rpcserve

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzHandler feeds arbitrary bodies and paths to the handler: every answer
// must be a JSON envelope (or an empty health answer), never a panic or a
// 5xx other than the documented 503.
func FuzzHandler(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":3}}`,
		`[{"method":"gas_price","params":[3]},{"method":"query","params":{"request_type":"view_state","account_id":"a.near","prefix_base64":"","finality":"final"}}]`,
		`{"method":"changes","params":{"changes_type":"single_access_key_changes","keys":[{"account_id":"a.near","public_key":"ed25519:1"}],"block_id":1}}`,
		`{"method":"tx","params":["x","y"]}`, `[]`, `{`, `"x"`, ``, `null`, `[[[]]]`,
	} {
		f.Add("/", seed)
		f.Add("/block", seed)
	}
	h := NewHandler(&fakeBackend{}, Config{MaxBatch: 5, MaxBodyBytes: 4096}, nil)
	f.Fuzz(func(t *testing.T, path, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " ?#%") {
			return
		}
		if _, err := url.Parse("http://x" + path); err != nil {
			return // not a request a client can send
		}
		// Heights 8 and 9 panic and block on purpose in the fake backend;
		// they are covered by their own tests.
		if strings.Contains(body, "8") || strings.Contains(body, "9") {
			return
		}
		req := httptest.NewRequest(http.MethodPost, "http://x"+path, strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusNotFound, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q %q: %s", rec.Code, path, body, rec.Body.String())
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("invalid JSON for %q %q: %s", path, body, rec.Body.String())
		}
	})
}
