//go:build e2e

package reliability

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/internal/procstat"
	"github.com/nearline/nearline/store/storetest"
)

// Helpers shared by the reliability tests: a
// simulated chain, per-table checksums of an archive, a reference run of
// the same chain, process stops, and scraping Prometheus metrics.

// longReliability reports whether the long variants run
// (NEARLINE_TEST_LONG=1): bigger chains and more kills.
func longReliability() bool { return os.Getenv("NEARLINE_TEST_LONG") == "1" }

// simChain is a running `nearline sim` whose final head has settled.
type simChain struct {
	addr string
	seed int
	head uint64
	c    *e2ekit.Client
	proc *e2ekit.Process
}

func (s *simChain) url() string { return "http://" + s.addr }

// startSim runs a simulator producing every height up to maxHeight at once
// and waits for its final head to settle.
func startSim(t testing.TB, seed, maxHeight int, extra ...string) *simChain {
	t.Helper()
	return startSimAt(t, e2ekit.AnyPort, seed, maxHeight, extra...)
}

func startSimAt(t testing.TB, addr string, seed, maxHeight int, extra ...string) *simChain {
	t.Helper()
	args := append([]string{"sim", "--listen", addr, "--seed", strconv.Itoa(seed), "--shards", "4",
		"--block-time", "0", "--max-height", strconv.Itoa(maxHeight)}, extra...)
	p := binary.Start(t, args...)
	if addr == e2ekit.AnyPort {
		addr = p.ListenAddr(t, "simulator listening")
	}
	c := e2ekit.NewClient(addr)
	c.WaitReady(t, time.Minute)
	head := e2ekit.WaitHead(t, c, uint64(maxHeight)-20, 3*time.Minute)
	return &simChain{addr: addr, seed: seed, head: head, c: c, proc: p}
}

// processMemory reads VmHWM and VmRSS (bytes) of a process.
func processMemory(tb testing.TB, pid int) (hwm, rss int64) {
	tb.Helper()
	m, err := procstat.ReadMemory(pid)
	if err != nil {
		tb.Fatalf("read serve's memory: %v", err)
	}
	return m.Peak, m.Resident
}

// servedChain is a simulated chain indexed from its genesis into a fresh
// database and served by `nearline serve`.
type servedChain struct {
	chain *simChain
	dbURL string
	serve *e2ekit.Process
	addr  string // serve's JSON-RPC address
}

// serveChain starts the simulator of seed up to maxHeight, indexes its
// chain from its genesis.json up to its head into a fresh database (within
// 3 minutes), then serves it and waits until serve answers.
func serveChain(tb testing.TB, seed, maxHeight int) servedChain {
	tb.Helper()
	genesis := filepath.Join(tb.TempDir(), "genesis.json")
	chain := startSim(tb, seed, maxHeight, "--genesis-out", genesis)
	dbURL := e2ekit.FreshDatabase(tb)
	if out, err := binary.Run(tb, 3*time.Minute, indexArgs(dbURL, chain.url(), chain.head, "--genesis", genesis)...); err != nil {
		tb.Fatalf("index: %v\n%s", err, e2ekit.Tail(out, 30))
	}
	p := binary.Start(tb, "serve", "--database-url", dbURL, "--listen", e2ekit.AnyPort)
	addr := p.ListenAddr(tb, "serving JSON-RPC")
	e2ekit.NewClient(addr).WaitReady(tb, 30*time.Second)
	return servedChain{chain: chain, dbURL: dbURL, serve: p, addr: addr}
}

// indexArgs are the arguments of `nearline index` from upstream (one or
// more URLs) into dbURL up to the height to.
func indexArgs(dbURL, upstream string, to uint64, extra ...string) []string {
	return append([]string{"index", "--database-url", dbURL, "--upstream", upstream,
		"--to", strconv.FormatUint(to, 10), "--progress-interval", "1h"}, extra...)
}

// tableSums checksums every table of the archive at dbURL
// (storetest.TableSums: the tables pg_catalog lists, the cursor's
// wall-clock time and goose's version table aside).
func tableSums(t *testing.T, dbURL string) map[string]storetest.Sum {
	t.Helper()
	_, conn, done := connect(t, dbURL, time.Minute)
	defer done()
	return storetest.TableSums(t, conn)
}

// connect opens a connection to dbURL for a check of at most timeout;
// done closes it.
func connect(tb testing.TB, dbURL string, timeout time.Duration) (context.Context, *pgx.Conn, func()) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		cancel()
		tb.Fatalf("connect: %v", err)
	}
	return ctx, conn, func() {
		conn.Close(context.Background())
		cancel()
	}
}

// faultRun starts the chain the fault tests share (faultChainSeed,
// faultChainHeights) and returns it, the checksums of its uninterrupted
// reference run and a fresh database for the test's own run.
func faultRun(t *testing.T) (*simChain, map[string]storetest.Sum, string) {
	t.Helper()
	chain := startSim(t, faultChainSeed, faultChainHeights)
	return chain, reference(t, chain), e2ekit.FreshDatabase(t)
}

// referenceSums caches the checksums of uninterrupted runs, by chain.
var referenceSums = struct {
	sync.Mutex
	byChain map[string]map[string]storetest.Sum
}{byChain: map[string]map[string]storetest.Sum{}}

// reference indexes chain up to its head into a fresh database in one
// uninterrupted run and returns its checksums (computed once per chain and
// package run).
func reference(t *testing.T, chain *simChain) map[string]storetest.Sum {
	t.Helper()
	key := fmt.Sprintf("seed=%d head=%d", chain.seed, chain.head)
	referenceSums.Lock()
	defer referenceSums.Unlock()
	if sums, ok := referenceSums.byChain[key]; ok {
		return sums
	}
	dbURL := e2ekit.FreshDatabase(t)
	began := time.Now()
	if out, err := binary.Run(t, 5*time.Minute, indexArgs(dbURL, chain.url(), chain.head)...); err != nil {
		t.Fatalf("reference index run: %v\n%s", err, e2ekit.Tail(out, 40))
	}
	sums := tableSums(t, dbURL)
	t.Logf("reference run of %s: %s; %s", key, time.Since(began).Round(time.Millisecond), describeSums(sums))
	for _, table := range []string{"blocks", "chunks", "transactions", "receipts", "actions", "state_changes",
		"account_history", "access_key_history", "contract_data_history", "transaction_statuses", "indexer_cursor"} {
		if sums[table].Rows == 0 {
			t.Fatalf("reference run left %s empty: the comparison would prove nothing", table)
		}
	}
	referenceSums.byChain[key] = sums
	return sums
}

func describeSums(sums map[string]storetest.Sum) string {
	var names []string
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", n, sums[n].Rows)
	}
	return b.String()
}

// stop sends sig to p and waits up to timeout for it to exit; it returns
// the exit error and whether the process exited in time.
func stop(t *testing.T, p *e2ekit.Process, sig syscall.Signal, timeout time.Duration) (error, bool) {
	t.Helper()
	if err := p.Signal(sig); err != nil {
		t.Logf("signal %v: %v", sig, err)
	}
	return p.WaitExit(timeout)
}

// adminConn connects to the test server's maintenance database (not one of
// the test databases), for pg_stat_activity and pg_terminate_backend: the
// server storetest makes the test databases on, whichever it is.
func adminConn(t *testing.T) *pgx.Conn {
	t.Helper()
	base := storetest.ServerURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// databaseName is the database a URL names.
func databaseName(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("parse database url: %v", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if !strings.HasPrefix(name, "nearline_test_") {
		t.Fatalf("refusing to touch database %q: not a test database", name)
	}
	return name
}

// goErrorMarkers are pieces of Go or driver error text that must never
// reach a client (matched case-sensitively: "Invalid JSON:" is NEAR's own
// wording, "json: cannot unmarshal" is Go's).
var goErrorMarkers = []string{"json: ", "pgx", "pgconn", "runtime error", "sql: ", "SQL", "goroutine", "panic(", "SQLSTATE", "dial tcp", "context deadline exceeded"}

// encodedRuns are base58 hashes and base64 values, which may contain a
// marker by chance.
var encodedRuns = regexp.MustCompile(`[A-Za-z0-9+/=]{20,}`)

func leaksGoError(body string) string {
	body = encodedRuns.ReplaceAllString(body, "")
	for _, m := range goErrorMarkers {
		if strings.Contains(body, m) {
			return m
		}
	}
	return ""
}
