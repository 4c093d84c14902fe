package rpcserve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// connTable is the server's connections: it caps them (MaxConnections in
// all, MaxConnectionsPerClient from one address) and follows the state of
// each (the http.Server's ConnState hook). At a cap, the connection that
// has been quiet longest (idle between requests, or silent since it was
// accepted for more than quietNew) is closed to make room, so clients that
// open connections and leave them idle cannot keep others out.
type connTable struct {
	max, perClient int

	mu      sync.Mutex
	open    map[*limitedConn]*connEntry
	clients map[string]int
	changed chan struct{} // closed, and replaced, on every change
}

// connEntry is what connTable knows of one connection.
type connEntry struct {
	state  http.ConnState
	since  time.Time // when it entered state
	client string
}

// quietNew is how long an accepted connection may send nothing before it
// counts as quiet (closed first at a cap, like an idle one).
const quietNew = time.Second

func newConnTable(max, perClient int) *connTable {
	return &connTable{
		max: max, perClient: perClient,
		open:    make(map[*limitedConn]*connEntry),
		clients: make(map[string]int),
		changed: make(chan struct{}),
	}
}

// signal wakes the waiters; t.mu is held.
func (t *connTable) signal() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// track is the http.Server's ConnState hook.
func (t *connTable) track(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.open[lc]; e != nil && state != http.StateClosed && state != http.StateHijacked {
		e.state, e.since = state, time.Now()
	}
	t.signal()
}

// quietest is the open connection (of client, or of any client for "")
// quiet longest, or nil; t.mu is held.
func (t *connTable) quietest(client string, now time.Time) *limitedConn {
	var victim *limitedConn
	var since time.Time
	for c, e := range t.open {
		quiet := e.state == http.StateIdle || (e.state == http.StateNew && now.Sub(e.since) >= quietNew)
		if !quiet || (client != "" && e.client != client) {
			continue
		}
		if victim == nil || e.since.Before(since) {
			victim, since = c, e.since
		}
	}
	return victim
}

// remove forgets c and frees its place.
func (t *connTable) remove(c *limitedConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.open[c]
	if e == nil {
		return
	}
	delete(t.open, c)
	if t.clients[e.client]--; t.clients[e.client] <= 0 {
		delete(t.clients, e.client)
	}
	t.signal()
}

// waitSettled waits until every open connection is idle, or ctx ends (its
// error).
func (t *connTable) waitSettled(ctx context.Context) error {
	for {
		t.mu.Lock()
		busy := 0
		for _, e := range t.open {
			if e.state != http.StateIdle {
				busy++
			}
		}
		changed := t.changed
		t.mu.Unlock()
		if busy == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%d connections still busy: %w", busy, ctx.Err())
		}
	}
}

// connLimit is a net.Listener whose connections a connTable caps.
type connLimit struct {
	net.Listener
	table  *connTable
	closed chan struct{}
	once   sync.Once
}

func limitListener(ln net.Listener, table *connTable) net.Listener {
	return &connLimit{Listener: ln, table: table, closed: make(chan struct{})}
}

// Accept waits for room under MaxConnections (closing the quietest
// connection when there is one), then for a connection. A connection
// from a client at MaxConnectionsPerClient closes that client's quietest
// connection, or, when all of them are busy, is closed at once.
func (l *connLimit) Accept() (net.Conn, error) {
	t := l.table
	for {
		if err := l.room(); err != nil {
			return nil, err
		}
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := clientOf(c)
		t.mu.Lock()
		var victim *limitedConn
		if t.clients[client] >= t.perClient {
			if victim = t.quietest(client, time.Now()); victim == nil {
				t.mu.Unlock()
				_ = c.Close()
				continue
			}
		}
		lc := &limitedConn{Conn: c}
		lc.release = sync.OnceFunc(func() { t.remove(lc) })
		t.open[lc] = &connEntry{state: http.StateNew, since: time.Now(), client: client}
		t.clients[client]++
		t.mu.Unlock()
		if victim != nil {
			_ = victim.Close()
		}
		return lc, nil
	}
}

// room returns once fewer than MaxConnections are open, closing the
// quietest connection while there is none; net.ErrClosed once the
// listener is closed.
func (l *connLimit) room() error {
	t := l.table
	for {
		t.mu.Lock()
		if len(t.open) < t.max {
			t.mu.Unlock()
			return nil
		}
		victim := t.quietest("", time.Now())
		changed := t.changed
		t.mu.Unlock()
		if victim != nil {
			_ = victim.Close()
			continue
		}
		// A new connection turns quiet after quietNew without a change.
		timer := time.NewTimer(quietNew)
		select {
		case <-changed:
		case <-timer.C:
		case <-l.closed:
			timer.Stop()
			return net.ErrClosed
		}
		timer.Stop()
	}
}

// Close stops accepting; an Accept waiting for room returns.
func (l *connLimit) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// clientOf is the address a connection comes from, without its port.
func clientOf(c net.Conn) string {
	addr := c.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// limitedConn frees its place when closed.
type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
