package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGetterKeepsToItsRequestRate: with RequestRate set, requests made at
// once go out spaced at that rate, and a 429's Retry-After holds back the
// requests of every caller, not only the one that got it.
func TestGetterKeepsToItsRequestRate(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	var limited atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if r.URL.Path == "/limited" && limited.CompareAndSwap(false, true) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(srv.Close)
	g, err := NewGetter(Config{Endpoints: []string{srv.URL}, RequestRate: 20, BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond}, nil)
	require.NoError(t, err)
	ok := func(Answer) error { return nil }
	ctx := context.Background()

	began := time.Now()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { require.NoError(t, g.Get(ctx, "/doc", ok)) })
	}
	wg.Wait()
	require.GreaterOrEqual(t, time.Since(began), 430*time.Millisecond, "10 requests at 20/s take 450 ms")
	mu.Lock()
	require.Len(t, times, 10)
	// Arrival at the server jitters by a few ms under load (the first
	// request's connection may take longer to set up than the tenth's):
	// unpaced, all ten arrive within a few ms; paced, 9 slots of 50 ms lie
	// between the first and the tenth leaving.
	require.GreaterOrEqual(t, times[9].Sub(times[0]), 400*time.Millisecond, "the tenth request reached the server about 9 slots after the first")
	times = nil
	mu.Unlock()

	began = time.Now()
	require.NoError(t, g.Get(ctx, "/limited", ok))
	require.NoError(t, g.Get(ctx, "/doc", ok))
	require.GreaterOrEqual(t, time.Since(began), time.Second, "the 429's Retry-After held both")

	_, err = NewGetter(Config{Endpoints: []string{srv.URL}, RequestRate: -1}, nil)
	require.ErrorContains(t, err, "request rate")
}
