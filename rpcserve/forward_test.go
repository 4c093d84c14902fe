package rpcserve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/httpcall/httpcalltest"
)

// TestForwardCarriesItsBearerToken: with ForwardBearerToken, a forwarded
// request carries Authorization: Bearer <token> to the upstream, which
// answers 401 without it; without the setting it carries none. The
// client's own Authorization header is not passed on either way.
func TestForwardCarriesItsBearerToken(t *testing.T) {
	t.Parallel()
	const token = "fwd-K3Y"
	upstream := &httpcalltest.KeyedUpstream{Key: token, Next: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":"authorized"}`))
	})}
	url := upstream.Start(t)
	ask := func(h http.Handler) string {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"light_client_proof","params":{}}`))
		req.Header.Set("Authorization", "Bearer client-own")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Body.String()
	}
	with := newTestHandler(t, &nodeBackend{}, Config{Forward: url, ForwardBearerToken: token}, nil)
	require.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":"authorized"}`, ask(with))
	without := newTestHandler(t, &nodeBackend{}, Config{Forward: url}, nil)
	require.NotContains(t, ask(without), "authorized")
	require.Equal(t, []string{"Bearer " + token, ""}, upstream.Take())
}
