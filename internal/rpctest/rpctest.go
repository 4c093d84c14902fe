// Package rpctest holds helpers for tests of JSON-RPC servers.
package rpctest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nearline/nearline/near"
)

// EchoUpstream starts an upstream NEAR node for t that answers every
// request with what it received, {"jsonrpc":"2.0","result":{"upstream_saw":
// <request>},"id":<its id>}, and returns its URL.
func EchoUpstream(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"jsonrpc\": \"2.0\", \"result\": {\"upstream_saw\": %s}, \"id\": %s}\n", body, req.ID)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Request is the JSON-RPC 2.0 request body for method with params.
func Request(method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "dontcare", "method": method, "params": params})
	return string(b)
}

// Serve posts body to h at / and returns the recorded answer.
func Serve(h http.Handler, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)))
	return rec
}

// Call posts the request for method with params to h, requires an HTTP
// 200 answer that is a JSON-RPC envelope, and returns its result and
// error.
func Call(t testing.TB, h http.Handler, method string, params any) (json.RawMessage, *near.Error) {
	t.Helper()
	rec := Serve(h, Request(method, params))
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", method, rec.Code, rec.Body.String())
	}
	var resp near.Response
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatalf("%s: decode %s: %v", method, rec.Body.String(), err)
	}
	return resp.Result, resp.Error
}
