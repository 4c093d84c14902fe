package upstream

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"

	"github.com/nearline/nearline/internal/httpcall/httpcalltest"
	"github.com/nearline/nearline/internal/logtest"
)

// secretKey is the API key the tests' endpoints carry: it must reach the
// server and nothing else.
const secretKey = "s3cr3t-K3Y"

// pathAndQuery is what the tests' logs record of a request.
func pathAndQuery(r *http.Request) string { return r.URL.Path + "?" + r.URL.RawQuery }

// TestGetterPutsPathsBeforeTheEndpointsQuery: an endpoint's query (an API
// key) is kept on every request, the document's path going before it,
// below the endpoint's base path, joined with a query of the path's own.
func TestGetterPutsPathsBeforeTheEndpointsQuery(t *testing.T) {
	t.Parallel()
	var log httpcalltest.Log
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Add(pathAndQuery(r))
		if r.URL.Query().Get("apiKey") != secretKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	paths := []string{"/v0/block/5", "/v0/last_block/final", "/000000000005/shard_0.json", "/v0/block/5?with=extra"}
	for _, c := range []struct {
		endpoint string
		want     []string
	}{
		{srv.URL + "?apiKey=" + secretKey, []string{
			"/v0/block/5?apiKey=" + secretKey, "/v0/last_block/final?apiKey=" + secretKey,
			"/000000000005/shard_0.json?apiKey=" + secretKey, "/v0/block/5?apiKey=" + secretKey + "&with=extra"}},
		{srv.URL + "/base/?apiKey=" + secretKey + "&x=1", []string{
			"/base/v0/block/5?apiKey=" + secretKey + "&x=1", "/base/v0/last_block/final?apiKey=" + secretKey + "&x=1",
			"/base/000000000005/shard_0.json?apiKey=" + secretKey + "&x=1", "/base/v0/block/5?apiKey=" + secretKey + "&x=1&with=extra"}},
		{srv.URL + "/base?apiKey=" + secretKey, []string{
			"/base/v0/block/5?apiKey=" + secretKey, "/base/v0/last_block/final?apiKey=" + secretKey,
			"/base/000000000005/shard_0.json?apiKey=" + secretKey, "/base/v0/block/5?apiKey=" + secretKey + "&with=extra"}},
	} {
		g, err := NewGetter(fastConfig(c.endpoint), nil)
		require.NoError(t, err)
		for _, p := range paths {
			require.NoError(t, g.Get(context.Background(), p, func(a Answer) error {
				require.Equal(t, http.StatusOK, a.Status, "%s %s", c.endpoint, p)
				return nil
			}))
		}
		require.Equal(t, c.want, log.Take(), c.endpoint)
	}

	// Without a query of its own the path's is the only one; a trailing
	// slash is dropped as before.
	g, err := NewGetter(fastConfig(srv.URL+"/"), nil)
	require.NoError(t, err)
	for _, p := range []string{"/v0/block/5", "/v0/block/5?with=extra"} {
		require.NoError(t, g.Get(context.Background(), p, func(Answer) error { return nil }))
	}
	require.Equal(t, []string{"/v0/block/5?", "/v0/block/5?with=extra"}, log.Take())
}

// TestClientPostsToTheEndpointWithItsQuery: the JSON-RPC client's POST
// goes to the endpoint as given, query included.
func TestClientPostsToTheEndpointWithItsQuery(t *testing.T) {
	t.Parallel()
	var log httpcalltest.Log
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Add(pathAndQuery(r))
		okResult(w, `"fine"`)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(fastConfig(srv.URL+"/rpc?apiKey="+secretKey), nil)
	require.NoError(t, err)
	var out string
	require.NoError(t, c.Call(context.Background(), "block", nil, &out))
	require.Equal(t, "fine", out)
	require.Equal(t, []string{"/rpc?apiKey=" + secretKey}, log.Take())
}

// TestFailuresDoNotShowTheKey: an upstream answering 503 until the
// attempts run out, one that refuses connections and one that
// garbage-collected the block fail with errors and log lines that name
// the endpoint redacted, never the key (in the query or as the bearer
// token); an endpoint that does not parse
// is refused without it.
func TestFailuresDoNotShowTheKey(t *testing.T) {
	t.Parallel()
	unavailable, count503 := rpcServer(t, func(_ int64, _ string, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	refused := httptest.NewServer(http.NotFoundHandler())
	refused.Close()
	collected, _ := rpcServer(t, func(_ int64, method string, w http.ResponseWriter) {
		if method == "status" {
			okResult(w, `{"sync_info":{"earliest_block_height":1000}}`)
			return
		}
		nearError(w, near.UnknownBlock(near.HeightID(5)))
	})
	withKey := func(base string) string { return base + "/?apiKey=" + secretKey }

	for name, call := range map[string]func(cfg Config, logger *slog.Logger) error{
		"getter": func(cfg Config, logger *slog.Logger) error {
			g, err := NewGetter(cfg, logger)
			require.NoError(t, err)
			return g.Get(context.Background(), "/v0/block/5", func(Answer) error { return nil })
		},
		"client": func(cfg Config, logger *slog.Logger) error {
			c, err := NewClient(cfg, logger)
			require.NoError(t, err)
			return c.Call(context.Background(), "block", map[string]any{"block_id": 5}, nil)
		},
	} {
		for what, endpoints := range map[string][]string{
			"503 until the attempts run out": {withKey(unavailable.URL)},
			"refused connections":            {withKey(refused.URL), withKey(unavailable.URL)},
			"garbage collected":              {withKey(collected.URL)},
		} {
			if name == "getter" && what == "garbage collected" {
				continue // a JSON-RPC answer
			}
			var logs logtest.Buffer
			cfg := fastConfig(endpoints...)
			cfg.MaxAttempts = 4
			cfg.BearerToken = secretKey // the header form too
			err := call(cfg, logs.Logger())
			require.Error(t, err, "%s: %s", name, what)
			shown := err.Error() + "\n" + logs.String()
			require.NotContains(t, shown, secretKey, "%s: %s", name, what)
			require.Contains(t, shown, "apiKey=REDACTED", "%s: %s: the endpoint is named, redacted", name, what)
			if what != "garbage collected" {
				require.Contains(t, logs.String(), "retrying", "%s: %s", name, what)
			}
		}
	}
	require.Positive(t, count503.Load())

	_, err := NewGetter(Config{Endpoints: []string{"http://a b/?apiKey=" + secretKey}}, nil)
	require.ErrorContains(t, err, "want an absolute http:// or https:// URL")
	require.NotContains(t, err.Error(), secretKey)
	_, err = NewClient(Config{Endpoints: []string{"localhost:3030?apiKey=" + secretKey}}, nil)
	require.Error(t, err)
	require.NotContains(t, err.Error(), secretKey)
	_, err = NewClient(Config{Endpoints: []string{"http://?apiKey=" + secretKey}}, nil)
	require.ErrorContains(t, err, "want an absolute http:// or https:// URL", "no host")
	require.True(t, strings.Contains(err.Error(), "apiKey=REDACTED"), err.Error())
}
