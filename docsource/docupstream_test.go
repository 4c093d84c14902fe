package docsource_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/internal/logtest"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
)

// TestNeardataCarriesTheKeyPastTheFinalHead: the final head's redirect,
// to a path or to an absolute URL, with the key echoed in its query or
// not, names the height; the document fetched next carries the key too.
// A redirect naming no height fails with the target shown redacted.
func TestNeardataCarriesTheKeyPastTheFinalHead(t *testing.T) {
	t.Parallel()
	const key = "head-K3Y"
	var mu sync.Mutex
	var seen []string
	var location string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.String())
		target := location
		mu.Unlock()
		switch {
		case r.URL.Query().Get("apiKey") != key:
			w.WriteHeader(http.StatusUnauthorized)
		case r.URL.Path == "/v0/last_block/final":
			w.Header().Set("Location", target)
			w.WriteHeader(http.StatusFound)
		case r.URL.Path == "/v0/block/77":
			_, _ = w.Write([]byte("null")) // a skipped height: no document to build
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	var logs logtest.Buffer
	cfg := fastHTTP(srv.URL + "?apiKey=" + key)
	cfg.MaxAttempts = 3
	f, err := docsource.NewNeardataFetcher(cfg, logs.Logger())
	require.NoError(t, err)
	ctx := context.Background()
	for _, target := range []string{"/v0/block/77", "/v0/block/77?apiKey=" + key, srv.URL + "/v0/block/77?apiKey=" + key} {
		mu.Lock()
		location, seen = target, nil
		mu.Unlock()
		head, err := f.FinalHead(ctx)
		require.NoError(t, err, target)
		require.Equal(t, uint64(77), head, target)
		_, err = f.Document(ctx, head)
		require.ErrorIs(t, err, bundle.ErrNoBlock, target)
		require.Equal(t, []string{"/v0/last_block/final?apiKey=" + key, "/v0/block/77?apiKey=" + key}, seen, target)
	}

	mu.Lock()
	location = srv.URL + "/v0/block/latest?apiKey=" + key
	mu.Unlock()
	_, err = f.FinalHead(ctx)
	require.ErrorContains(t, err, "names no height")
	require.ErrorContains(t, err, "apiKey=REDACTED")
	require.NotContains(t, err.Error()+logs.String(), key)
	require.True(t, strings.Contains(logs.String(), "retrying"), "a malformed redirect is fetched again")
}

// TestLakeCarriesTheBearerToken: lake over HTTP sends cfg.BearerToken
// with every object it fetches (the mirror answers 401 without it), and
// its head RPC, another upstream, gets no Authorization header; a lake
// directory refuses a token, without showing it.
func TestLakeCarriesTheBearerToken(t *testing.T) {
	t.Parallel()
	const key = "lake-K3Y"
	chain := simtest.New(t, sim.Config{Seed: 4, Shards: 2, MaxHeight: 12})
	lake := &countingHandler{next: chain.Node.Handler(), bearer: key}
	rpcs := &countingHandler{next: chain.Node.Handler()}
	lakeSrv, rpcSrv := httptest.NewServer(lake), httptest.NewServer(rpcs)
	t.Cleanup(lakeSrv.Close)
	t.Cleanup(rpcSrv.Close)
	cfg := fastHTTP(lakeSrv.URL + "/lake")
	cfg.BearerToken = key
	f, err := docsource.NewLakeFetcher(cfg, rpcClient(t, rpcSrv.URL), nil)
	require.NoError(t, err)
	ctx := context.Background()
	head, err := f.FinalHead(ctx)
	require.NoError(t, err)
	for h := head - 3; h <= head; h++ {
		if _, err := f.Document(ctx, h); !errors.Is(err, bundle.ErrNoBlock) {
			require.NoError(t, err, "height %d", h)
		}
	}
	require.Zero(t, lake.refused.Load(), "every object request carried the token")
	require.Positive(t, lake.count.Load())
	require.Positive(t, rpcs.count.Load(), "the head came from the RPC upstream")
	require.Zero(t, rpcs.authorized.Load(), "the head RPC got no Authorization header")

	dirCfg := fastHTTP(t.TempDir())
	dirCfg.BearerToken = key
	_, err = docsource.NewLakeFetcher(dirCfg, nil, nil)
	require.ErrorContains(t, err, "a bearer token is for an HTTP upstream")
	require.NotContains(t, err.Error(), key)
}
