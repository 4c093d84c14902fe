package e2ekit

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Sim starts `nearline sim --listen AnyPort args...` and waits until it
// answers; it returns the simulator's address and a client of it.
func (b Binary) Sim(t testing.TB, args ...string) (string, *Client) {
	t.Helper()
	addr := b.Start(t, append([]string{"sim", "--listen", AnyPort}, args...)...).ListenAddr(t, "simulator listening")
	c := NewClient(addr)
	c.WaitReady(t, time.Minute)
	return addr, c
}

// SimChain is a `nearline sim` process whose chain is produced up to
// near its --max-height.
type SimChain struct {
	// Addr is the simulator's host:port, URL its http:// address.
	Addr, URL string
	Client    *Client
	// Genesis is the path of the genesis.json it wrote (--genesis-out).
	Genesis string
	// Shape is the chain's, read once the head is at least 20 below
	// --max-height (the last heights may be skipped by the chain).
	Shape ChainShape
}

// Chain starts `nearline sim --block-time 0 --max-height maxHeight
// --genesis-out <temp>/genesis.json args...`, waits until it answers and
// reads its chain's shape.
func (b Binary) Chain(t testing.TB, maxHeight uint64, args ...string) SimChain {
	t.Helper()
	genesis := filepath.Join(t.TempDir(), "genesis.json")
	addr, c := b.Sim(t, append([]string{"--block-time", "0", "--max-height", strconv.FormatUint(maxHeight, 10),
		"--genesis-out", genesis}, args...)...)
	return SimChain{Addr: addr, URL: "http://" + addr, Client: c, Genesis: genesis, Shape: ReadShape(t, c, maxHeight-20)}
}

// Index runs `nearline index` from upstream (comma-separated URLs) into
// dbURL up to the height to, with args added, and fails the test unless it
// exits 0 within timeout.
func (b Binary) Index(t testing.TB, timeout time.Duration, dbURL, upstream string, to uint64, args ...string) {
	t.Helper()
	all := append([]string{"index", "--database-url", dbURL, "--upstream", upstream,
		"--to", strconv.FormatUint(to, 10), "--progress-interval", "1h"}, args...)
	if out, err := b.Run(t, timeout, all...); err != nil {
		t.Fatalf("nearline index: %v\n%s", err, Tail(out, 40))
	}
}

// IndexChain runs `nearline index` over chain, from its upstream up to its
// head, into a FreshDatabase with args added, and fails the test unless it
// exits 0 within timeout; it returns the database's URL.
func (b Binary) IndexChain(t testing.TB, timeout time.Duration, chain SimChain, args ...string) string {
	t.Helper()
	dbURL := FreshDatabase(t)
	b.Index(t, timeout, dbURL, chain.URL, chain.Shape.Head, args...)
	return dbURL
}

// Serve starts `nearline serve --database-url dbURL --listen AnyPort
// args...` and waits until it answers status; it returns the process, its
// address (JSON-RPC and /metrics) and a client of it.
func (b Binary) Serve(t testing.TB, dbURL string, args ...string) (*Process, string, *Client) {
	t.Helper()
	p := b.Start(t, append([]string{"serve", "--database-url", dbURL, "--listen", AnyPort}, args...)...)
	addr := p.ListenAddr(t, "serving JSON-RPC")
	c := NewClient(addr)
	c.WaitReady(t, time.Minute)
	return p, addr, c
}
