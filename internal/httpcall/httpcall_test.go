package httpcall_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/bufpool"
	"github.com/nearline/nearline/internal/httpcall"
)

// TestClientReadsWithinTheLimit: a body of the limit is read whole, one byte
// more is TooLarge with at most limit+1 bytes read, whether or not the
// server announces the length; the POST carries its body as JSON.
func TestClientReadsWithinTheLimit(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := io.ReadAll(r.Body)
		if r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusUnsupportedMediaType)
			return
		}
		n, _ := strconv.Atoi(string(got))
		if r.URL.Query().Has("chunked") {
			w.(http.Flusher).Flush() // no Content-Length
		}
		_, _ = io.WriteString(w, strings.Repeat("x", n))
	}))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/", "/?chunked"} {
		for _, c := range []struct {
			size     int
			tooLarge bool
		}{{0, false}, {10, false}, {11, true}, {5000, true}} {
			resp, err := httpcall.Client{HTTP: srv.Client(), Limit: 10}.PostJSON(t.Context(), srv.URL+path, []byte(strconv.Itoa(c.size)))
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, c.tooLarge, resp.TooLarge, "%s size %d", path, c.size)
			require.Equal(t, strings.Repeat("x", min(c.size, 11)), string(resp.Body), "%s size %d", path, c.size)
		}
	}
}

// TestClientReadsLargeBodiesIntoItsBuffers: with Buffers, a body of
// bufpool.MinSize or more is read into a buffer given back before, its
// length announced or not; a smaller one, and one over the limit, are read
// as without them.
func TestClientReadsLargeBodiesIntoItsBuffers(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Has("chunked") {
			w.(http.Flusher).Flush()
		}
		_, _ = io.WriteString(w, strings.Repeat("x", n))
	}))
	t.Cleanup(srv.Close)
	const limit = 1 << 20
	pool := bufpool.New(8 << 20)
	c := httpcall.Client{HTTP: srv.Client(), Limit: limit, Buffers: pool}
	for _, q := range []string{"", "&chunked"} {
		given := pool.Get(limit)
		pool.Put(given)
		resp, err := c.Get(context.Background(), srv.URL+"/?n="+strconv.Itoa(bufpool.MinSize)+q)
		require.NoError(t, err)
		require.Equal(t, strings.Repeat("x", bufpool.MinSize), string(resp.Body))
		require.Same(t, &given[:1][0], &resp.Body[0], "read into the buffer given back %q", q)

		pool.Put(resp.Body)
		resp, err = c.Get(context.Background(), srv.URL+"/?n=100"+q)
		require.NoError(t, err)
		require.Equal(t, strings.Repeat("x", 100), string(resp.Body))
		require.NotSame(t, &given[:1][0], &resp.Body[0], "a small body takes no pooled buffer %q", q)
		resp, err = c.Get(context.Background(), srv.URL+"/?n="+strconv.Itoa(limit+1)+q)
		require.NoError(t, err)
		require.True(t, resp.TooLarge)
		require.Len(t, resp.Body, limit+1)
		pool.Get(limit) // empty the pool for the next round
	}
}

// TestClientReturnsTheTransportError: a refused connection and a timeout come
// back as the client said them, for the caller to classify.
func TestClientReturnsTheTransportError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	client := httpcall.Client{HTTP: srv.Client(), Limit: 10}
	_, err := client.PostJSON(ctx, srv.URL, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	srv.Close()

	_, err = client.PostJSON(t.Context(), srv.URL, nil)
	require.Error(t, err)

	_, err = client.Get(t.Context(), "http://a b/")
	require.ErrorContains(t, err, "build request")
}

func TestRetryAfterIsWholeSeconds(t *testing.T) {
	t.Parallel()
	for header, want := range map[string]time.Duration{"0": 0, "3": 3 * time.Second} {
		wait, ok := httpcall.Response{Header: http.Header{"Retry-After": {header}}}.RetryAfter()
		require.True(t, ok, header)
		require.Equal(t, want, wait, header)
	}
	for _, header := range []string{"", "-1", "soon", "Wed, 21 Oct 2026 07:28:00 GMT"} {
		_, ok := httpcall.Response{Header: http.Header{"Retry-After": {header}}}.RetryAfter()
		require.False(t, ok, header)
	}
}
