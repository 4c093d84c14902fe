package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/nearline/nearline/nearvm"

	"github.com/stretchr/testify/require"
)

// testConfig is a small busy chain.
func testConfig(maxHeight uint64) Config { // maxHeight 0: genesis only
	cfg := DefaultConfig()
	cfg.BlockTime = 0
	cfg.MaxHeight = maxHeight
	cfg.Seed = 7
	cfg.EpochLength = 20
	cfg.SkipRate = 0.1
	cfg.MissingChunkRate = 0.1
	cfg.TxsPerBlock = 6
	return cfg
}

// sharedRuntime lets the tests' many nodes share one compile cache.
var sharedRuntime = sync.OnceValue(func() *nearvm.Runtime {
	rt, err := nearvm.New(context.Background(), nearvm.Config{}, nil)
	if err != nil {
		panic(err)
	}
	return rt
})

// newNode returns a node for cfg, closed when the test ends.
func newNode(t *testing.T, cfg Config) *Node {
	t.Helper()
	n, err := New(context.Background(), cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.Close(context.Background()) })
	return n
}

// startNode returns a node for cfg produced to cfg.MaxHeight and a server
// of its JSON-RPC; it runs on the shared runtime unless cfg names one or
// has no contracts.
func startNode(t *testing.T, cfg Config) (*Node, *httptest.Server) {
	t.Helper()
	if cfg.Runtime == nil && !cfg.NoContracts {
		cfg.Runtime = sharedRuntime()
	}
	n := newNode(t, cfg)
	require.NoError(t, n.ProduceTo(context.Background(), cfg.MaxHeight))
	srv := httptest.NewServer(n.Handler())
	t.Cleanup(srv.Close)
	return n, srv
}

// rpcResponse is a decoded JSON-RPC response.
type rpcResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Name  string `json:"name"`
		Cause struct {
			Name string          `json:"name"`
			Info json.RawMessage `json:"info"`
		} `json:"cause"`
	} `json:"error"`
}

func rpc(t *testing.T, url, method string, params any) rpcResponse {
	t.Helper()
	status, raw := postRPC(t, url, method, params)
	require.Equal(t, http.StatusOK, status, string(raw))
	var out rpcResponse
	require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	return out
}

func rpcResult(t *testing.T, url, method string, params any) json.RawMessage {
	t.Helper()
	r := rpc(t, url, method, params)
	require.Nil(t, r.Error, "%s %v: %s", method, params, errText(r))
	return r.Result
}

func errText(r rpcResponse) string {
	if r.Error == nil {
		return ""
	}
	return r.Error.Name + "/" + r.Error.Cause.Name + " " + string(r.Error.Cause.Info)
}

func rpcRaw(t *testing.T, url, method string, params any) []byte {
	t.Helper()
	_, raw := postRPC(t, url, method, params)
	return raw
}

// postRPC sends a JSON-RPC request and returns the response's status and body.
func postRPC(t *testing.T, url, method string, params any) (int, []byte) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "dontcare", "method": method, "params": params})
	require.NoError(t, err)
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw
}

// httpGet gets url without following a redirect.
func httpGet(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, body
}

func startServer(t *testing.T, n *Node) string {
	t.Helper()
	srv := httptest.NewServer(n.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

func newBenchHTTP(n *Node) *httptest.Server { return httptest.NewServer(n.Handler()) }
