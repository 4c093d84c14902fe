package rpcserve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/near"
)

// The tests of this file are the attacks of issue 39, each against the
// defaults where it can be: what a hostile client does, and what a polite
// one still gets meanwhile.

// politeWithin is how soon a polite client must be answered during an
// attack.
const politeWithin = 2 * time.Second

// politeBlock asks for the final block on a connection of its own, from
// source (an address of the loopback network, "" for any), and fails the
// test unless it is answered with HTTP 200 within politeWithin.
func politeBlock(t *testing.T, addr, source string) {
	t.Helper()
	dialer := &net.Dialer{}
	if source != "" {
		dialer.LocalAddr = &net.TCPAddr{IP: net.ParseIP(source)}
	}
	client := &http.Client{Timeout: politeWithin, Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
	began := time.Now()
	resp, err := client.Post("http://"+addr, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"finality":"final"}}`))
	require.NoError(t, err, "the polite client got no answer in %s", politeWithin)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "the polite client after %s: %s", time.Since(began), body)
}

// serveAttacked runs Serve with h and cfg until the test ends.
func serveAttacked(t *testing.T, h http.Handler, cfg ServeConfig) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	addr, done := serveInBackground(t, ctx, h, cfg)
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return addr
}

// dialAll opens n connections to addr and writes head on each; they close
// with the test.
func dialAll(t *testing.T, addr string, n int, head string) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	for range n {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		_, err = io.WriteString(conn, head)
		require.NoError(t, err)
		conns = append(conns, conn)
	}
	return conns
}

// allocatedBy is the bytes the Go heap allocated while fn ran. Tests that
// call it do not run in parallel.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHeadersAreBounded: request headers past MaxHeaderBytes get 431 and
// the connection closed (Go's default let a connection send a megabyte of
// them, which cost ~10 MiB of memory each until the read timeout).
func TestHeadersAreBounded(t *testing.T) {
	t.Parallel()
	addr := serveAttacked(t, newTestHandler(t, &fakeBackend{}, Config{}, nil), ServeConfig{})
	conn := dialAll(t, addr, 1, fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nX-Pad: %s\r\nContent-Length: 2\r\n\r\n{}", strings.Repeat("a", 64<<10)))[0]
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	politeBlock(t, addr, "")
}

// TestBatchArraysAreCountedWhileScanned: a body of a million array items
// is refused having kept at most MaxBatch + 1 of them, whether it is a
// batch or (with the method in the path) positional params; building the
// list of them took ~24 bytes an item before the count was compared.
func TestBatchArraysAreCountedWhileScanned(t *testing.T) {
	h := newTestHandler(t, &fakeBackend{}, Config{}, nil)
	body := "[" + strings.Repeat("0,", 1<<20) + "0]"
	for _, path := range []string{"/", "/gas_price"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		allocated := allocatedBy(func() { h.ServeHTTP(rec, req) })
		t.Logf("%s: %d bytes allocated for a %d-byte body", path, allocated, len(body))
		require.Equal(t, "PARSE_ERROR", errorCause(t, rec.Body.Bytes()), "%s: %s", path, rec.Body.String())
		require.Less(t, allocated, uint64(4*len(body)), "%s: allocated %d bytes for a %d-byte body", path, allocated, len(body))
	}
}

// TestLongListsAreRefusedUnread: EXPERIMENTAL_changes with 600,000
// account_ids is a PARSE_ERROR naming the limit, found before any of them
// is read into a list (which took ~193 MiB for 620k).
func TestLongListsAreRefusedUnread(t *testing.T) {
	h := newTestHandler(t, &fakeBackend{}, Config{}, nil)
	for _, params := range []string{
		`{"changes_type":"account_changes","account_ids":[` + strings.Repeat(`"a.near",`, 600_000) + `"a.near"],"block_id":1}`,
		`{"changes_type":"single_access_key_changes","keys":[` + strings.Repeat(`{"account_id":"a.near","public_key":"ed25519:x"},`, 100_000) + `{}],"block_id":1}`,
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"EXPERIMENTAL_changes","params":` + params + `}`
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		allocated := allocatedBy(func() { h.ServeHTTP(rec, req) })
		t.Logf("%d bytes allocated for a %d-byte body", allocated, len(body))
		require.Equal(t, "PARSE_ERROR", errorCause(t, rec.Body.Bytes()), "%.300s", rec.Body.String())
		require.Contains(t, rec.Body.String(), fmt.Sprintf("more than %d items", DefaultMaxListItems))
		require.Less(t, allocated, uint64(4*len(body)), "allocated %d bytes for a %d-byte body", allocated, len(body))
	}
	// A list at the limit is read.
	ids := strings.TrimSuffix(strings.Repeat(`"a.near",`, DefaultMaxListItems), ",")
	rec := post(t, h, "/", `{"jsonrpc":"2.0","id":1,"method":"EXPERIMENTAL_changes","params":{"changes_type":"account_changes","account_ids":[`+ids+`],"block_id":1}}`)
	require.NotContains(t, rec.Body.String(), "items")
}

// TestIdleConnectionsMakeRoom: with every connection open and idle after
// one request (keep-alive), a new client is served at once: the idlest
// connection is closed to make room (it waited for the 2-minute idle
// timeout before).
func TestIdleConnectionsMakeRoom(t *testing.T) {
	t.Parallel()
	const conns = 16
	addr := serveAttacked(t, newTestHandler(t, &fakeBackend{}, Config{}, nil), ServeConfig{MaxConnections: conns})
	for _, conn := range dialAll(t, addr, conns, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 19\r\n\r\n{\"method\":\"health\"}") {
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	for range 3 {
		politeBlock(t, addr, "")
	}
}

// TestOneClientCannotHoldEveryConnection: at the defaults, one address
// that opens 1,024 connections and keeps each busy sending a body gets 256
// of them; the others are closed at once, and a client from another
// address is served (it waited for the body read timeout before).
func TestOneClientCannotHoldEveryConnection(t *testing.T) {
	t.Parallel()
	addr := serveAttacked(t, newTestHandler(t, &fakeBackend{}, Config{}, nil), ServeConfig{})
	conns := dialAll(t, addr, DefaultMaxConnections, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
	closed := 0
	for _, conn := range conns[DefaultMaxConnectionsPerClient:] {
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(3*time.Second)))
		var ne net.Error
		if _, err := conn.Read(make([]byte, 1)); err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
			closed++ // EOF, or a reset as the request was not read
		}
	}
	require.Equal(t, DefaultMaxConnections-DefaultMaxConnectionsPerClient, closed, "connections past the per-client cap closed")
	politeBlock(t, addr, "127.0.0.2")
}

// bigBackend answers `block` with a large JSON string and counts the
// calls.
type bigBackend struct {
	fakeBackend
	answer json.RawMessage
	calls  atomic.Int64
}

func (b *bigBackend) Block(context.Context, near.BlockReference) (json.RawMessage, error) {
	b.calls.Add(1)
	return b.answer, nil
}

// dialSmallWindow dials addr with a 4 KiB receive buffer, so that a
// client that never reads holds the server's writes.
func dialSmallWindow(t *testing.T, addr string) net.Conn {
	t.Helper()
	dialer := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := dialer.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestSlowReadersHoldNoSlot: clients that pipeline requests for large
// answers and never read them hold no concurrency slot: the slot is freed
// before the answer is written, so another client is served (it got 503
// while every slot waited on a blocked write).
func TestSlowReadersHoldNoSlot(t *testing.T) {
	t.Parallel()
	const slots = 2
	backend := &bigBackend{answer: json.RawMessage(`"` + strings.Repeat("a", 8<<20) + `"`)}
	addr := serveAttacked(t, newTestHandler(t, backend, Config{MaxConcurrent: slots}, nil), ServeConfig{})
	request := "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 48\r\n\r\n" + `{"method":"block","params":{"finality":"final"}}`
	for range 2 * slots {
		_, err := io.WriteString(dialSmallWindow(t, addr), strings.Repeat(request, 3))
		require.NoError(t, err)
	}
	require.True(t, wait.Until(5*time.Second, func() bool { return backend.calls.Load() >= slots }))
	for range 3 {
		politeBlock(t, addr, "")
	}
}

// TestDeclaredBodiesHoldNoMemory: seven silent connections that declared
// 64 MiB of bodies between them (and sent one byte each) hold none of the
// body memory: a large body is read and answered, and a batch is not
// "busy" (both were refused for as long as the connections stayed).
func TestDeclaredBodiesHoldNoMemory(t *testing.T) {
	t.Parallel()
	addr := serveAttacked(t, newTestHandler(t, &fakeBackend{}, Config{}, nil), ServeConfig{})
	for _, size := range []int{10 << 20, 10 << 20, 10 << 20, 10 << 20, 10 << 20, 10 << 20, 4 << 20} {
		dialAll(t, addr, 1, fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n{", size))
	}
	big := `{"id":1,"method":"gas_price","params":[3],"pad":"` + strings.Repeat("a", 100<<10) + `"}`
	client := &http.Client{Timeout: politeWithin}
	for range 3 {
		resp, err := client.Post("http://"+addr, "application/json", strings.NewReader(big))
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		require.NotContains(t, string(body), "busy")
	}
	politeBlock(t, addr, "")
}

// TestSlowBodiesAreCutOff: a body that stops arriving is answered 408
// once it falls behind the minimum send rate, after sendGrace (the
// connection was held for the 60-second read timeout before).
func TestSlowBodiesAreCutOff(t *testing.T) {
	t.Parallel()
	addr := serveAttacked(t, newTestHandler(t, &fakeBackend{}, Config{}, nil), ServeConfig{})
	conn := dialAll(t, addr, 1, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")[0]
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(sendGrace+5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "no answer within %s", sendGrace+5*time.Second)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	require.Equal(t, "PARSE_ERROR", errorCause(t, body))
}

// countingUpstream answers every request after release is closed (nil: at
// once), counting them and the most in flight at once.
type countingUpstream struct {
	release  chan struct{}
	calls    atomic.Int64
	inFlight atomic.Int64
	mu       sync.Mutex
	most     int64
	answer   string
}

func (u *countingUpstream) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	u.calls.Add(1)
	n := u.inFlight.Add(1)
	defer u.inFlight.Add(-1)
	u.mu.Lock()
	u.most = max(u.most, n)
	u.mu.Unlock()
	if u.release != nil {
		<-u.release
	}
	_, _ = io.WriteString(w, u.answer)
}

// TestForwardsPerBatchAreBounded: a batch of 100 send_tx items forwards
// MaxForwards of them; the rest get an error saying why (all 100 went to
// the upstream, one after another, with the operator's token).
func TestForwardsPerBatchAreBounded(t *testing.T) {
	t.Parallel()
	upstream := &countingUpstream{answer: `{"jsonrpc":"2.0","id":1,"result":"ok"}`}
	srv := httptest.NewServer(upstream)
	t.Cleanup(srv.Close)
	h := newTestHandler(t, &fakeBackend{}, Config{Forward: srv.URL}, nil)
	items := make([]string, 100)
	for i := range items {
		items[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"send_tx","params":{"signed_tx_base64":"AA=="}}`, i)
	}
	rec := post(t, h, "/", "["+strings.Join(items, ",")+"]")
	var answers []near.Response
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &answers))
	require.Len(t, answers, 100)
	require.EqualValues(t, DefaultMaxForwards, upstream.calls.Load())
	for i, a := range answers[DefaultMaxForwards:] {
		require.NotNil(t, a.Error, "item %d", DefaultMaxForwards+i)
		require.Contains(t, string(a.Error.Data), "forwards more than")
	}
}

// TestForwardsInFlightAreBounded: of eight requests forwarded at once to
// an upstream that holds them, MaxForwards are in flight; the others get
// "server busy" after the queue wait.
func TestForwardsInFlightAreBounded(t *testing.T) {
	t.Parallel()
	upstream := &countingUpstream{release: make(chan struct{}), answer: `{"jsonrpc":"2.0","id":1,"result":"ok"}`}
	srv := httptest.NewServer(upstream)
	t.Cleanup(srv.Close)
	h := newTestHandler(t, &fakeBackend{}, Config{Forward: srv.URL, QueueWait: 100 * time.Millisecond}, nil)
	const requests = 8
	answers := make(chan string, requests)
	for range requests {
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"send_tx","params":{"signed_tx_base64":"AA=="}}`)))
			answers <- rec.Body.String()
		}()
	}
	busy := 0
	deadline := time.After(5 * time.Second)
	for busy < requests-DefaultMaxForwards {
		select {
		case a := <-answers:
			require.Contains(t, a, "busy")
			busy++
		case <-deadline:
			close(upstream.release)
			t.Fatalf("%d requests in flight upstream, %d answered busy", upstream.inFlight.Load(), busy)
		}
	}
	close(upstream.release)
	for range DefaultMaxForwards {
		require.Contains(t, <-answers, `"result":"ok"`)
	}
	upstream.mu.Lock()
	defer upstream.mu.Unlock()
	require.EqualValues(t, DefaultMaxForwards, upstream.most)
}

// TestForwardedAnswersTakeBodyMemory: a forwarded answer larger than
// SmallBodyBytes needs room in the body memory to be written; with a slow
// body holding all of it, the answer is refused "busy" (it was written
// outside the budget).
func TestForwardedAnswersTakeBodyMemory(t *testing.T) {
	t.Parallel()
	const limit = 256 << 10
	upstream := &countingUpstream{answer: `{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("a", 200<<10) + `"}`}
	srv := httptest.NewServer(upstream)
	t.Cleanup(srv.Close)
	addr := serveAttacked(t, newTestHandler(t, &fakeBackend{}, Config{Forward: srv.URL, MaxBodyBytes: limit, MaxBodyMemory: limit, QueueWait: 100 * time.Millisecond}, nil), ServeConfig{})
	// 150 KiB sent of a 256 KiB body: its buffer, and reservation, is the
	// whole budget.
	dialAll(t, addr, 1, fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n{%s", limit, strings.Repeat(" ", 150<<10)))
	var body string
	require.True(t, wait.Until(5*time.Second, func() bool {
		resp, err := http.Post("http://"+addr, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"send_tx","params":{"signed_tx_base64":"AA=="}}`))
		require.NoError(t, err)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(raw)
		return resp.StatusCode == http.StatusServiceUnavailable
	}), "the forwarded answer was written without room: %.200s", body)
	require.Contains(t, body, "busy")
}
