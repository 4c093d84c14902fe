// Package rpctest holds helpers for tests of JSON-RPC servers.
package rpctest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
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
