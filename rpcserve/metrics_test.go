package rpcserve

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

func TestMetrics(t *testing.T) {
	t.Parallel()
	m, err := NewMetrics(prometheus.NewRegistry())
	require.NoError(t, err)
	h := newTestHandler(t, &fakeBackend{}, Config{Metrics: m, Forward: fakeUpstream(t, "upstream")}, nil)
	for _, body := range []string{
		`{"id":1,"method":"block","params":{"block_id":3}}`,
		`{"id":1,"method":"block","params":{"block_id":5}}`,
		`{"id":1,"method":"block","params":{"block_id":7}}`,
		`{"id":1,"method":"block","params":{"finality":"final","block_id":3}}`,
		`[{"id":1,"method":"send_tx","params":{}},{"id":2,"method":"made_up_1"},{"id":3,"method":"made_up_2"}]`,
	} {
		require.Equal(t, http.StatusOK, post(t, h, "/", body).Code)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	text := rec.Body.String()
	for _, want := range []string{
		`nearline_rpc_requests_total{method="block",outcome="ok"} 1`,
		`nearline_rpc_requests_total{method="block",outcome="UNKNOWN_BLOCK"} 1`,
		`nearline_rpc_requests_total{method="block",outcome="INTERNAL_ERROR"} 1`,
		`nearline_rpc_requests_total{method="block",outcome="PARSE_ERROR"} 1`,
		`nearline_rpc_requests_total{method="send_tx",outcome="forwarded"} 1`,
		`nearline_rpc_requests_total{method="other",outcome="METHOD_NOT_FOUND"} 2`,
		`nearline_rpc_request_seconds_count{method="block"} 4`,
	} {
		require.Contains(t, text, want)
	}

	// Without metrics, /metrics is not served.
	plain := newTestHandler(t, &fakeBackend{}, Config{}, nil)
	rec = httptest.NewRecorder()
	plain.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}
