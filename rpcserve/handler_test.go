package rpcserve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nearline/nearline/near"
	"github.com/stretchr/testify/require"
)

// blockingBackend holds `block` calls until release is closed.
type blockingBackend struct {
	fakeBackend
	started chan struct{}
	release chan struct{}
}

func (b *blockingBackend) Block(ctx context.Context, ref near.BlockReference) (json.RawMessage, error) {
	b.started <- struct{}{}
	select {
	case <-b.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return b.fakeBackend.Block(ctx, ref)
}

func post(t *testing.T, h http.Handler, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return rec
}

func errorCause(t *testing.T, body []byte) string {
	t.Helper()
	var resp near.Response
	require.NoError(t, json.Unmarshal(body, &resp), "body %s", body)
	require.NotNil(t, resp.Error, "body %s", body)
	return resp.Error.CauseName()
}

func TestConcurrencyLimit(t *testing.T) {
	t.Parallel()
	backend := &blockingBackend{started: make(chan struct{}, 1), release: make(chan struct{})}
	h := newTestHandler(t, backend, Config{MaxConcurrent: 1, QueueWait: 20 * time.Millisecond}, nil)

	var wg sync.WaitGroup
	var first *httptest.ResponseRecorder
	wg.Add(1)
	go func() {
		defer wg.Done()
		first = post(t, h, "/", `{"id":1,"method":"block","params":{"block_id":3}}`)
	}()
	<-backend.started

	busy := post(t, h, "/", `{"id":2,"method":"gas_price","params":[3]}`)
	require.Equal(t, http.StatusServiceUnavailable, busy.Code)
	require.Equal(t, "1", busy.Header().Get("Retry-After"))
	require.Equal(t, "INTERNAL_ERROR", errorCause(t, busy.Body.Bytes()))

	close(backend.release)
	wg.Wait()
	require.Equal(t, http.StatusOK, first.Code)
	require.Contains(t, first.Body.String(), `"height":3`)

	// The slot is free again.
	again := post(t, h, "/", `{"id":3,"method":"gas_price","params":[3]}`)
	require.Equal(t, http.StatusOK, again.Code)
	require.Contains(t, again.Body.String(), `"gas_price":"100000003"`)
}

func TestInternalErrorsAreLoggedNotShown(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	h := newTestHandler(t, &fakeBackend{}, Config{}, slog.New(slog.NewTextHandler(&logs, nil)))

	rec := post(t, h, "/", `{"id":1,"method":"block","params":{"block_id":7}}`)
	require.Equal(t, http.StatusOK, rec.Code)
	require.NotContains(t, rec.Body.String(), "secret")
	require.Equal(t, "INTERNAL_ERROR", errorCause(t, rec.Body.Bytes()))
	require.Equal(t, 1, strings.Count(logs.String(), "secret database detail"), "logs: %s", logs.String())

	logs.Reset()
	rec = post(t, h, "/", `{"id":1,"method":"block","params":{"block_id":8}}`)
	require.NotContains(t, rec.Body.String(), "height 8")
	require.Equal(t, "INTERNAL_ERROR", errorCause(t, rec.Body.Bytes()))
	require.Contains(t, logs.String(), "rpc method panicked")
}

func TestOversizedBodyOverHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newTestHandler(t, &fakeBackend{}, Config{MaxBodyBytes: 1024}, nil))
	t.Cleanup(srv.Close)

	// A body far larger than the limit is refused without reading it all.
	body := `{"id":1,"method":"block","params":{"pad":"` + strings.Repeat("a", 8<<20) + `"}}`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Equal(t, "PARSE_ERROR", errorCause(t, got))
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"zero value", Config{}, ""},
		{"forward https", Config{Forward: "https://rpc.mainnet.near.org"}, ""},
		{"forward not a url", Config{Forward: "rpc.mainnet.near.org"}, "forward url"},
		{"forward ftp", Config{Forward: "ftp://x"}, "forward url"},
		{"negative batch", Config{MaxBatch: -1}, "max batch"},
		{"negative body", Config{MaxBodyBytes: -1}, "max body bytes"},
		{"body memory below the body limit", Config{MaxBodyBytes: 100, MaxBodyMemory: 50}, "max body memory 50 is below max body bytes 100"},
		{"blank api key", Config{APIKeys: []string{"k", " "}}, "api key"},
		{"negative response", Config{MaxResponseBytes: -1}, "max response bytes"},
		{"negative timeout", Config{RequestTimeout: -time.Second}, "request timeout -1s is negative"},
		{"negative concurrency", Config{MaxConcurrent: -2}, "max concurrent -2 is negative"},
		{"negative queue wait", Config{QueueWait: -time.Millisecond}, "queue wait -1ms is negative"},
		{"negative forward timeout", Config{ForwardTimeout: -time.Second}, "forward timeout -1s is negative"},
		{"negative forward response", Config{MaxForwardResponseBytes: -3}, "max forward response bytes -3 is negative"},
		{"empty key", Config{APIKeys: []string{"ok", ""}}, "api key"},
		{"key with slash", Config{APIKeys: []string{"a/b"}}, "api key"},
		{"forward bearer token", Config{Forward: "https://node", ForwardBearerToken: "K3Y"}, ""},
		{"forward bearer token with a line break", Config{Forward: "https://node", ForwardBearerToken: "K3Y\r\nX: 1"}, "forward bearer token: an API key may hold only visible ASCII"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
	_, err := NewHandler(&fakeBackend{}, Config{MaxBatch: -1}, nil)
	require.ErrorContains(t, err, "max batch -1 is negative")
}

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	cfg := Config{MaxBatch: 7}.withDefaults()
	require.Equal(t, 7, cfg.MaxBatch)
	require.Equal(t, int64(DefaultMaxBodyBytes), cfg.MaxBodyBytes)
	require.Equal(t, int64(DefaultMaxBodyMemory), cfg.MaxBodyMemory)
	require.Equal(t, int64(100<<20), Config{MaxBodyBytes: 100 << 20}.withDefaults().MaxBodyMemory, "room for the largest body")
	require.Equal(t, int64(DefaultMaxResponseBytes), cfg.MaxResponseBytes)
	require.Equal(t, DefaultRequestTimeout, cfg.RequestTimeout)
	require.Equal(t, DefaultMaxConcurrent, cfg.MaxConcurrent)
	require.Equal(t, DefaultQueueWait, cfg.QueueWait)
}

func TestCORS(t *testing.T) {
	t.Parallel()
	open := newTestHandler(t, &fakeBackend{}, Config{}, nil)
	req := httptest.NewRequest(http.MethodOptions, "/", nil)
	req.Header.Set("Origin", "https://wallet.example")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	rec := httptest.NewRecorder()
	open.ServeHTTP(rec, req)
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Equal(t, "*", rec.Header().Get("Access-Control-Allow-Origin"))
	require.Equal(t, "content-type", rec.Header().Get("Access-Control-Allow-Headers"))
	require.Contains(t, rec.Header().Get("Access-Control-Allow-Methods"), "POST")

	req = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"method":"health"}`))
	req.Header.Set("Origin", "https://wallet.example")
	rec = httptest.NewRecorder()
	open.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "*", rec.Header().Get("Access-Control-Allow-Origin"))

	only := newTestHandler(t, &fakeBackend{}, Config{CORSOrigins: []string{"https://app.example"}}, nil)
	for origin, want := range map[string]string{"https://app.example": "https://app.example", "https://evil.example": ""} {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"method":"health"}`))
		req.Header.Set("Origin", origin)
		rec := httptest.NewRecorder()
		only.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, want, rec.Header().Get("Access-Control-Allow-Origin"), origin)
	}
}

// countingBackend counts gas_price calls.
type countingBackend struct {
	fakeBackend
	calls atomic.Int32
}

func (b *countingBackend) GasPrice(ctx context.Context, id *near.BlockID) (*near.GasPriceView, error) {
	b.calls.Add(1)
	return b.fakeBackend.GasPrice(ctx, id)
}

func TestBatchResponseLimit(t *testing.T) {
	t.Parallel()
	one := post(t, newTestHandler(t, &fakeBackend{}, Config{}, nil), "/", `{"id":1,"method":"gas_price","params":[1]}`).Body.Len()
	item := `{"id":1,"method":"gas_price","params":[1]}`
	batch := "[" + strings.Repeat(item+",", 9) + item + "]"
	for _, tt := range []struct {
		limit           int64
		answered, calls int
	}{
		{limit: 0, answered: 10, calls: 10},               // the default, 25 MiB
		{limit: int64(10 * one), answered: 10, calls: 10}, // exactly fits
		{limit: int64(3*one + 1), answered: 4, calls: 4},  // the 4th answer crosses it
		{limit: 1, answered: 1, calls: 1},                 // the first is never refused
	} {
		backend := &countingBackend{}
		rec := post(t, newTestHandler(t, backend, Config{MaxResponseBytes: tt.limit}, nil), "/", batch)
		require.Equal(t, http.StatusOK, rec.Code)
		var answers []near.Response
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &answers), rec.Body.String())
		require.Len(t, answers, 10)
		for i, a := range answers {
			require.JSONEq(t, "1", string(a.ID))
			if i < tt.answered {
				require.Nil(t, a.Error, "limit %d: answer %d", tt.limit, i)
				continue
			}
			require.NotNil(t, a.Error, "limit %d: answer %d", tt.limit, i)
			require.Equal(t, "PARSE_ERROR", a.Error.CauseName())
			require.Contains(t, string(a.Error.Data), "Response too large")
		}
		require.EqualValues(t, tt.calls, backend.calls.Load(), "limit %d: refused items are not run", tt.limit)
	}
}

// nodeBackend is a fakeBackend that is a node itself: it answers
// network_info and refuses the other node-only methods.
type nodeBackend struct {
	fakeBackend
	asked []string
}

func (n *nodeBackend) NodeMethod(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	n.asked = append(n.asked, method+" "+string(params))
	if method == "network_info" {
		return json.RawMessage(`{"active_peers":[],"num_active_peers":0}`), nil
	}
	return nil, &ForwardError{Reason: NotServed(method)}
}

// A NodeBackend answers the node-only methods it can (network_info here);
// the others are forwarded when an upstream is configured, else refused
// with NOT_SERVED, as for any Backend. A Backend that is no node never
// answers them itself.
func TestNodeBackendAnswersNodeMethods(t *testing.T) {
	t.Parallel()
	node := &nodeBackend{}
	h := newTestHandler(t, node, Config{}, nil)
	rec := post(t, h, "/", `{"jsonrpc":"2.0","id":1,"method":"network_info","params":[]}`)
	require.JSONEq(t, `{"jsonrpc":"2.0","result":{"active_peers":[],"num_active_peers":0},"id":1}`, rec.Body.String())
	rec = post(t, h, "/network_info", ``)
	require.JSONEq(t, `{"jsonrpc":"2.0","result":{"active_peers":[],"num_active_peers":0},"id":"dontcare"}`, rec.Body.String())
	require.Equal(t, "NOT_SERVED", errorCause(t, post(t, h, "/", `{"method":"light_client_proof","params":{}}`).Body.Bytes()))
	require.Equal(t, []string{"network_info []", "network_info {}", "light_client_proof {}"}, node.asked)

	forwarding := newTestHandler(t, &nodeBackend{}, Config{Forward: fakeUpstream(t, "upstream")}, nil)
	rec = post(t, forwarding, "/", `{"jsonrpc":"2.0","id":2,"method":"network_info"}`)
	require.JSONEq(t, `{"jsonrpc":"2.0","result":{"active_peers":[],"num_active_peers":0},"id":2}`, rec.Body.String())
	rec = post(t, forwarding, "/", `{"jsonrpc":"2.0","id":3,"method":"light_client_proof","params":{}}`)
	require.Contains(t, rec.Body.String(), `"upstream_saw"`)

	archive := newTestHandler(t, &fakeBackend{}, Config{}, nil)
	require.Equal(t, "NOT_SERVED", errorCause(t, post(t, archive, "/", `{"method":"network_info"}`).Body.Bytes()))
}

// nilBackend answers some methods with neither a result nor an error, and
// others with views whose lists of changes are nil.
type nilBackend struct{ fakeBackend }

func (nilBackend) Block(context.Context, near.BlockReference) (json.RawMessage, error) {
	return nil, nil
}

func (nilBackend) Query(context.Context, near.QueryRequest) (any, error) { return nil, nil }

func (nilBackend) GasPrice(context.Context, *near.BlockID) (*near.GasPriceView, error) {
	return nil, nil
}

func (nilBackend) BlockEffects(_ context.Context, ref near.BlockReference) (*near.BlockEffectsView, error) {
	if ref.BlockID != nil {
		return nil, nil
	}
	return &near.BlockEffectsView{BlockHash: "h"}, nil
}

func (nilBackend) Changes(_ context.Context, req near.ChangesRequest) (*near.ChangesView, error) {
	if req.Block.BlockID != nil {
		return nil, nil
	}
	return &near.ChangesView{BlockHash: "h"}, nil
}

// A Backend's nil result without an error is a logged INTERNAL_ERROR,
// never an empty `result`; a nil list of changes is answered as [].
func TestNilResults(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, &nilBackend{}, Config{}, nil)
	for _, req := range []string{
		`{"method":"block","params":{"finality":"final"}}`,
		`{"method":"gas_price","params":[null]}`,
		`{"method":"query","params":{"request_type":"view_account","account_id":"a.near","finality":"final"}}`,
		`{"method":"EXPERIMENTAL_view_account","params":{"account_id":"a.near","finality":"final"}}`,
		`{"method":"block_effects","params":{"block_id":3}}`,
		`{"method":"EXPERIMENTAL_changes_in_block","params":{"block_id":3}}`,
		`{"method":"changes","params":{"changes_type":"account_changes","account_ids":["a.near"],"block_id":3}}`,
	} {
		require.Equal(t, "INTERNAL_ERROR", errorCause(t, post(t, h, "/", req).Body.Bytes()), req)
	}
	for req, want := range map[string]string{
		`{"method":"block_effects","params":{"finality":"final"}}`:                                                     `{"block_hash":"h","changes":[],"block_effects":[]}`,
		`{"method":"EXPERIMENTAL_changes_in_block","params":{"finality":"final"}}`:                                     `{"block_hash":"h","changes":[]}`,
		`{"method":"changes","params":{"changes_type":"account_changes","account_ids":["a.near"],"finality":"final"}}`: `{"block_hash":"h","changes":[]}`,
	} {
		var resp near.Response
		require.NoError(t, json.Unmarshal(post(t, h, "/", req).Body.Bytes(), &resp))
		require.Nil(t, resp.Error, req)
		require.JSONEq(t, want, string(resp.Result), req)
	}
}
