package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGetterRetriesFailsOverAndHonoursRetryAfter: 5xx, 429 (its
// Retry-After waited), a malformed answer and a dead endpoint are retried
// or failed over; a redirect is handed over, not followed; an answer the
// caller refuses fails at once.
func TestGetterRetriesFailsOverAndHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	var limitedAt atomic.Int64
	var waited atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch {
		case r.URL.Path == "/head":
			http.Redirect(w, r, "/v0/block/42", http.StatusFound)
		case r.URL.Path == "/gone":
			w.WriteHeader(http.StatusNotFound)
		case n == 1:
			w.WriteHeader(http.StatusBadGateway)
		case n == 2:
			limitedAt.Store(time.Now().UnixNano())
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case n == 3:
			waited.Store(time.Now().UnixNano() - limitedAt.Load())
			fmt.Fprint(w, "<html>")
		default:
			fmt.Fprint(w, `{"ok":true}`)
		}
	}))
	t.Cleanup(srv.Close)
	cfg := fastConfig(srv.URL + "/")
	cfg.MaxBackoff = 2 * time.Second
	var kinds []string
	cfg.OnError = func(kind string) { kinds = append(kinds, kind) }
	g, err := NewGetter(cfg, nil)
	require.NoError(t, err)
	ctx := context.Background()
	var body string
	err = g.Get(ctx, "/doc", func(a Answer) error {
		if a.Body[0] != '{' {
			return fmt.Errorf("%w: not JSON", ErrMalformedAnswer)
		}
		body = string(a.Body)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, `{"ok":true}`, body)
	require.Equal(t, []string{FailHTTP5xx, FailHTTP429, FailMalformed}, kinds)
	require.GreaterOrEqual(t, time.Duration(waited.Load()), 900*time.Millisecond, "waited for Retry-After")

	var loc string
	require.NoError(t, g.Get(ctx, "/head", func(a Answer) error { loc = a.Location; return nil }))
	require.Equal(t, "/v0/block/42", loc)

	refused := errors.New("not this")
	before := calls.Load()
	err = g.Get(ctx, "/gone", func(a Answer) error { return refused })
	require.ErrorIs(t, err, refused)
	require.Equal(t, before+1, calls.Load(), "a refused answer is not fetched again")

	// A dead first endpoint fails over to the live one.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	g, err = NewGetter(fastConfig(dead.URL, srv.URL), nil)
	require.NoError(t, err)
	require.NoError(t, g.Get(ctx, "/doc", func(a Answer) error { return nil }))
}
