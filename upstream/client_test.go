package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
)

// rpcServer answers every request with handler's (status, body), counting
// requests.
func rpcServer(t *testing.T, handler func(n int64, method string, w http.ResponseWriter)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req near.Request
		_ = json.Unmarshal(body, &req)
		handler(count.Add(1), req.Method, w)
	}))
	t.Cleanup(srv.Close)
	return srv, &count
}

func okResult(w http.ResponseWriter, result string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"x","result":`+result+`}`)
}

func nearError(w http.ResponseWriter, e *near.Error) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "x", "error": e})
	_, _ = w.Write(b)
}

func fastConfig(endpoints ...string) Config {
	return Config{Endpoints: endpoints, Timeout: 5 * time.Second, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
}

func TestClientRetriesEachFailureKindOnOneEndpoint(t *testing.T) {
	t.Parallel()
	cases := map[string]func(w http.ResponseWriter){
		FailHTTP5xx:   func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) },
		FailHTTP429:   func(w http.ResponseWriter) { w.WriteHeader(http.StatusTooManyRequests) },
		FailMalformed: func(w http.ResponseWriter) { _, _ = io.WriteString(w, `{"jsonrpc":"2.0","resu`) },
		FailTimeout:   func(w http.ResponseWriter) { time.Sleep(2 * time.Second) },
		FailInternal:  func(w http.ResponseWriter) { nearError(w, near.InternalError("boom")) },
		FailNotSynced: func(w http.ResponseWriter) { nearError(w, near.NotSyncedYet()) },
	}
	for kind, fail := range cases {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv, count := rpcServer(t, func(n int64, _ string, w http.ResponseWriter) {
				if n <= 2 {
					fail(w)
					return
				}
				okResult(w, `{"answer":42}`)
			})
			var kinds []string
			var mu sync.Mutex
			cfg := fastConfig(srv.URL)
			if kind == FailTimeout {
				cfg.Timeout = time.Second
			}
			cfg.OnError = func(k string) { mu.Lock(); kinds = append(kinds, k); mu.Unlock() }
			c, err := NewClient(cfg, nil)
			require.NoError(t, err)
			var out struct{ Answer int }
			require.NoError(t, c.Call(context.Background(), "block", map[string]any{"finality": "final"}, &out))
			require.Equal(t, 42, out.Answer)
			require.Equal(t, int64(3), count.Load())
			require.Equal(t, []string{kind, kind}, kinds)
		})
	}
}

func TestClientFailsOverToHealthyEndpoint(t *testing.T) {
	t.Parallel()
	bad, badCount := rpcServer(t, func(n int64, _ string, w http.ResponseWriter) {
		switch n % 4 {
		case 0:
			w.WriteHeader(http.StatusInternalServerError)
		case 1:
			w.WriteHeader(http.StatusTooManyRequests)
		case 2:
			_, _ = io.WriteString(w, "<html>bad gateway</html>")
		case 3:
			time.Sleep(400 * time.Millisecond)
		}
	})
	good, goodCount := rpcServer(t, func(_ int64, _ string, w http.ResponseWriter) { okResult(w, `"fine"`) })
	c, err := NewClient(fastConfig(bad.URL, good.URL), nil)
	require.NoError(t, err)
	for range 20 {
		var out string
		require.NoError(t, c.Call(context.Background(), "block", nil, &out))
		require.Equal(t, "fine", out)
	}
	require.Equal(t, int64(20), goodCount.Load())
	require.Equal(t, int64(1), badCount.Load(), "after one failure the client sticks to the endpoint that answered")
}

func TestClientGivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	srv, count := rpcServer(t, func(_ int64, _ string, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	cfg := fastConfig(srv.URL)
	cfg.MaxAttempts = 4
	c, err := NewClient(cfg, nil)
	require.NoError(t, err)
	err = c.Call(context.Background(), "block", nil, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), "http 503")
	require.ErrorIs(t, err, ErrUnavailable, "a caller that outlives outages retries on it")
	require.Equal(t, int64(4), count.Load())
}

func TestClientReturnsNEARErrorsWithoutRetry(t *testing.T) {
	t.Parallel()
	srv, count := rpcServer(t, func(_ int64, _ string, w http.ResponseWriter) { nearError(w, near.UnknownBlock(near.HeightID(7))) })
	c, err := NewClient(fastConfig(srv.URL), nil)
	require.NoError(t, err)
	err = c.Call(context.Background(), "block", map[string]any{"block_id": 7}, nil)
	var ne *near.Error
	require.ErrorAs(t, err, &ne)
	require.Equal(t, "UNKNOWN_BLOCK", ne.CauseName())
	require.True(t, near.IsUnknownBlock(err))
	require.False(t, errors.Is(err, ErrNeedsArchival), "status has no earliest height, so the block is just unknown")
	require.False(t, errors.Is(err, ErrUnavailable), "an answer is no outage")
	require.Equal(t, int64(2), count.Load(), "one call plus one status probe")
}

func TestClientReportsGarbageCollectedUpstream(t *testing.T) {
	t.Parallel()
	gcNode := func(t *testing.T) *httptest.Server {
		srv, _ := rpcServer(t, func(_ int64, method string, w http.ResponseWriter) {
			if method == "status" {
				okResult(w, `{"sync_info":{"earliest_block_height":1000,"latest_block_height":2000}}`)
				return
			}
			nearError(w, near.UnknownBlock(near.HeightID(5)))
		})
		return srv
	}
	t.Run("every upstream collected", func(t *testing.T) {
		t.Parallel()
		c, err := NewClient(fastConfig(gcNode(t).URL, gcNode(t).URL), nil)
		require.NoError(t, err)
		err = c.Call(context.Background(), "block", map[string]any{"block_id": 5}, nil)
		require.ErrorIs(t, err, ErrNeedsArchival)
		require.Contains(t, err.Error(), "keeps blocks from 1000")
	})
	t.Run("garbage collected block error", func(t *testing.T) {
		t.Parallel()
		srv, _ := rpcServer(t, func(_ int64, _ string, w http.ResponseWriter) {
			nearError(w, near.GarbageCollectedBlock(near.BlockStamp{BlockHeight: 5, BlockHash: "x"}))
		})
		c, err := NewClient(fastConfig(srv.URL), nil)
		require.NoError(t, err)
		err = c.Call(context.Background(), "chunk", map[string]any{"block_id": 5, "shard_id": 0}, nil)
		require.ErrorIs(t, err, ErrNeedsArchival)
	})
	t.Run("archival node behind a regular one", func(t *testing.T) {
		t.Parallel()
		archival, _ := rpcServer(t, func(_ int64, _ string, w http.ResponseWriter) { okResult(w, `{"height":5}`) })
		c, err := NewClient(fastConfig(gcNode(t).URL, archival.URL), nil)
		require.NoError(t, err)
		var out struct{ Height int }
		require.NoError(t, c.Call(context.Background(), "block", map[string]any{"block_id": 5}, &out))
		require.Equal(t, 5, out.Height)
	})
	t.Run("moving past a collected endpoint spends no attempt", func(t *testing.T) {
		t.Parallel()
		down, count := rpcServer(t, func(_ int64, _ string, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
		cfg := fastConfig(gcNode(t).URL, down.URL)
		cfg.MaxAttempts = 3
		c, err := NewClient(cfg, nil)
		require.NoError(t, err)
		err = c.Call(context.Background(), "block", map[string]any{"block_id": 5}, nil)
		require.ErrorIs(t, err, ErrUnavailable, "the other endpoint is down, not collected")
		require.NotErrorIs(t, err, ErrNeedsArchival)
		require.ErrorContains(t, err, "3 attempts failed")
		require.Equal(t, int64(3), count.Load(), "every attempt went to the endpoint that may have the block")
	})
	t.Run("height above earliest is a plain unknown block", func(t *testing.T) {
		t.Parallel()
		c, err := NewClient(fastConfig(gcNode(t).URL), nil)
		require.NoError(t, err)
		err = c.Call(context.Background(), "block", map[string]any{"block_id": 1500}, nil)
		require.True(t, near.IsUnknownBlock(err))
		require.NotErrorIs(t, err, ErrNeedsArchival)
	})
}

func TestClientStopsOnContextCancel(t *testing.T) {
	t.Parallel()
	// The server answers only once the test is over: the call can end
	// only by its context.
	over := make(chan struct{})
	srv, _ := rpcServer(t, func(_ int64, _ string, w http.ResponseWriter) { <-over })
	t.Cleanup(func() { close(over) }) // before the server closes (cleanups run last first)
	cfg := fastConfig(srv.URL)
	cfg.Timeout = time.Hour
	c, err := NewClient(cfg, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err = c.Call(ctx, "block", nil, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestClientConfigValidation(t *testing.T) {
	t.Parallel()
	_, err := NewClient(Config{}, nil)
	require.Error(t, err)
	_, err = NewClient(Config{Endpoints: []string{"localhost:3030"}}, nil)
	require.Error(t, err)
}

func TestClientHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	var first atomic.Int64
	var waited atomic.Int64
	srv, count := rpcServer(t, func(n int64, _ string, w http.ResponseWriter) {
		if n == 1 {
			first.Store(time.Now().UnixNano())
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		waited.Store(time.Now().UnixNano() - first.Load())
		okResult(w, `1`)
	})
	cfg := fastConfig(srv.URL)
	cfg.MaxBackoff = 2 * time.Second
	c, err := NewClient(cfg, nil)
	require.NoError(t, err)
	require.NoError(t, c.Call(context.Background(), "block", nil, nil))
	require.Equal(t, int64(2), count.Load())
	require.GreaterOrEqual(t, time.Duration(waited.Load()), 900*time.Millisecond, "waited for Retry-After")
}
