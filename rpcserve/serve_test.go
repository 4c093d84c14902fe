package rpcserve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/near"
)

// notSyncedBackend has no block yet.
type notSyncedBackend struct{ fakeBackend }

func (notSyncedBackend) Block(context.Context, near.BlockReference) (json.RawMessage, error) {
	return nil, near.NotSyncedYet()
}

// serveInBackground listens on a free port and runs Serve there until ctx
// ends; done receives what Serve returned.
func serveInBackground(t *testing.T, ctx context.Context, h http.Handler, cfg ServeConfig) (addr string, done <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h, cfg, nil) }()
	return ln.Addr().String(), served
}

// requireServeReturns requires that Serve, whose result done receives,
// returns nil within the given time, and fails with failure if it does not.
func requireServeReturns(t *testing.T, done <-chan error, within time.Duration, failure string) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(within):
		t.Fatal(failure)
	}
}

func TestServeAnswersAndShutsDown(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	metrics, err := NewMetrics(reg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done := serveInBackground(t, ctx, newTestHandler(t, &notSyncedBackend{}, Config{Metrics: metrics}, nil), ServeConfig{})

	reqCtx, reqCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer reqCancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, "http://"+addr+"/block",
		strings.NewReader(`{"params":{"finality":"final"}}`))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `"NOT_SYNCED_YET"`)

	resp, err = http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `nearline_rpc_requests_total{method="block",outcome="NOT_SYNCED_YET"} 1`)
	require.Contains(t, string(body), `go_goroutines`)

	cancel()
	requireServeReturns(t, done, 20*time.Second, "serve did not shut down")
}

func TestServeRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for cfg, want := range map[ServeConfig]string{
		{ShutdownTimeout: -time.Second}: "shutdown timeout -1s is negative",
		{RequestTimeout: -time.Second}:  "request timeout -1s is negative",
		{MaxConnections: -1}:            "max connections -1 is negative",
	} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		require.ErrorContains(t, Serve(context.Background(), ln, newTestHandler(t, &fakeBackend{}, Config{}, nil), cfg, nil), want)
		_, err = ln.Accept()
		require.ErrorIs(t, err, net.ErrClosed, "Serve closes the listener it was given")
	}
}

func TestServeFinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	backend := &blockingBackend{started: make(chan struct{}, 1), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done := serveInBackground(t, ctx, newTestHandler(t, backend, Config{}, nil), ServeConfig{ShutdownTimeout: 20 * time.Second})

	type answer struct {
		code int
		body string
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Post("http://"+addr+"/", "application/json",
			strings.NewReader(`{"id":1,"method":"block","params":{"block_id":3}}`))
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- answer{code: resp.StatusCode, body: string(b), err: err}
	}()
	select { // the request is in flight
	case <-backend.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the request never reached the backend")
	}
	cancel() // shutdown begins

	// New connections are refused while the in-flight request waits.
	wait.For(t, 10*time.Second, "new connections to be refused", func() bool {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
		}
		return err != nil
	})
	select {
	case err := <-done:
		t.Fatalf("serve returned before the in-flight request finished: %v", err)
	default:
	}

	close(backend.release)
	got := <-answered
	require.NoError(t, got.err)
	require.Equal(t, http.StatusOK, got.code)
	require.Contains(t, got.body, `"height":3`)
	requireServeReturns(t, done, 20*time.Second, "serve did not return after the in-flight request finished")
}

// TestServeDrainsBeforeClosing: once ctx ends, a new request is answered
// with 503 and NEAR's error envelope for DrainTime (not reset), and the
// port is closed after it.
func TestServeDrainsBeforeClosing(t *testing.T) {
	t.Parallel()
	srv := serveToDrain(t, 2*time.Second)
	resp, err := srv.health()
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	srv.cancel()
	body := srv.await503(t)
	var env near.Response
	require.NoError(t, json.Unmarshal(body, &env))
	require.NotNil(t, env.Error)
	require.Equal(t, near.KindInternal, env.Error.Name)
	require.Contains(t, string(env.Error.Data), "shutting down")

	requireServeReturns(t, srv.done, 10*time.Second, "Serve did not return after draining")
	_, err = srv.health()
	require.Error(t, err, "the port is closed after draining")
}

// TestServeAnswersAConnectionAcceptedWhileDraining holds a connection
// accepted during the drain and sends its request only once the port has
// closed: it still gets the 503 envelope. (net/http's Shutdown alone would
// close it unanswered, since it reads the request after Shutdown began.)
func TestServeAnswersAConnectionAcceptedWhileDraining(t *testing.T) {
	t.Parallel()
	srv := serveToDrain(t, 300*time.Millisecond)
	addr := srv.addr
	srv.cancel()
	srv.await503(t)
	held, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer held.Close()
	wait.For(t, 5*time.Second, "the port to close at the end of the drain", func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})

	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://"+addr, strings.NewReader(`{"method":"health"}`))
	require.NoError(t, err)
	require.NoError(t, req.Write(held))
	require.NoError(t, held.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(held), req)
	require.NoError(t, err, "the held connection gets an answer, not a close")
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)

	requireServeReturns(t, srv.done, 10*time.Second, "Serve did not return after draining")
}

// drainServer is Serve over a fakeBackend, with a DrainTime, for the tests
// of the drain: cancel starts it.
type drainServer struct {
	addr   string
	done   <-chan error
	cancel context.CancelFunc
	client *http.Client
}

func serveToDrain(t *testing.T, drainTime time.Duration) drainServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h := newTestHandler(t, &fakeBackend{}, Config{}, nil)
	addr, done := serveInBackground(t, ctx, h, ServeConfig{DrainTime: drainTime})
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	return drainServer{addr: addr, done: done, cancel: cancel, client: client}
}

// health posts a health request on a new connection.
func (s drainServer) health() (*http.Response, error) {
	return s.client.Post("http://"+s.addr, "application/json", strings.NewReader(`{"method":"health"}`))
}

// await503 waits for a health request answered 503, as while draining,
// and returns the answer's body.
func (s drainServer) await503(t *testing.T) []byte {
	t.Helper()
	var body []byte
	wait.For(t, 2*time.Second, "a 503 while draining", func() bool {
		resp, err := s.health()
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ = io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusServiceUnavailable
	})
	return body
}

// TestServeCapsConnections: beyond MaxConnections, a new connection is not
// served while every open one is busy, and is once one is idle (it is
// then closed to make room).
func TestServeCapsConnections(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	backend := &blockingBackend{started: make(chan struct{}, 1), release: make(chan struct{})}
	addr, done := serveInBackground(t, ctx, newTestHandler(t, backend, Config{}, nil), ServeConfig{MaxConnections: 1})
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	send := func(conn net.Conn, body string) (*http.Request, error) {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://"+addr, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		return req, req.Write(conn)
	}
	first, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer first.Close()
	_, err = send(first, `{"method":"block","params":{"finality":"final"}}`)
	require.NoError(t, err)
	<-backend.started // the first connection is busy

	second, err := net.Dial("tcp", addr) // the kernel queues it
	require.NoError(t, err)
	defer second.Close()
	req, err := send(second, `{"method":"health"}`)
	require.NoError(t, err)
	require.NoError(t, second.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	reader := bufio.NewReader(second)
	_, err = http.ReadResponse(reader, req)
	var ne net.Error
	require.ErrorAs(t, err, &ne, "no answer while the first connection is busy")
	require.True(t, ne.Timeout())

	close(backend.release) // the first is answered, then idle
	require.NoError(t, second.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(reader, req)
	require.NoError(t, err, "the queued request is served once the first connection is idle")
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
