package docsource_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/internal/logtest"
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
