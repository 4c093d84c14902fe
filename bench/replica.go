package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/pgcluster"
)

// replicaRow is one request kind's figures: one `nearline serve` on the
// primary, and a round-robin of two (one on the primary, one on a
// streaming replica), medians over runs.
type replicaRow struct {
	method    string
	one, pair load
	ratios    []float64 // pair/one of each run, in run order
}

// replicaReport is what the replica phase measured.
type replicaReport struct {
	blocks  int64
	clients int
	rows    []replicaRow
}

// replica measures serving from a primary plus a streaming replica against
// serving from the primary alone. It makes a PostgreSQL primary and a
// streaming replica of its own (internal/pgcluster: initdb, pg_basebackup),
// backfills --replica-blocks heights into the primary as the backfill phase
// does, waits until the replica has replayed the cursor, and starts three
// `nearline serve` processes (the binary built from this checkout): one on
// the primary, measured alone, and one on the primary and one on the
// replica, measured behind a round-robin reverse proxy. The single serve
// sits behind the same proxy (a round-robin of one), so both carry its
// cost. Each request kind of the serve phase, and their mix, is measured
// --runs times on each, alternating.
func (e *benchEnv) replica(ctx context.Context) error {
	to, err := e.lastBlock(ctx, min(e.o.replicaBlocks, e.o.blocks))
	if err != nil {
		return err
	}
	host, err := pgcluster.NewHost()
	if err != nil {
		return err
	}
	defer host.Remove()
	stop := func(c *pgcluster.Cluster) {
		if err := c.Stop(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	primary, err := host.Primary(ctx, "primary")
	if err != nil {
		return err
	}
	defer stop(primary)
	replica, err := primary.Replica(ctx, "replica")
	if err != nil {
		return err
	}
	defer stop(replica)
	fmt.Fprintf(os.Stderr, "PostgreSQL %s: primary on port %d, streaming replica on port %d\n", host.Bin, primary.Port, replica.Port)

	// The backfill phase's code, on the primary's server.
	onPrimary := &benchEnv{o: e.o, logger: e.logger, chain: e.chain, report: &report{}}
	onPrimary.o.databaseURL = primary.URL("postgres", "postgres")
	run, primaryURL, err := onPrimary.backfillOnce(ctx, "nearline_bench_replica", sourceRPC, e.chain.plainURL, to, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "backfilled %d blocks into the primary in %.1fs\n", run.blocks, run.seconds)
	u, err := url.Parse(primaryURL)
	if err != nil {
		return fmt.Errorf("parse database url: %w", err)
	}
	replicaURL := replica.URL("postgres", strings.TrimPrefix(u.Path, "/"))
	if err := waitReplayed(ctx, primaryURL, replicaURL); err != nil {
		return err
	}

	bin, err := buildNearline(ctx)
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(bin))
	var serves []string
	for _, dbURL := range []string{primaryURL, primaryURL, replicaURL} {
		addr, stop, err := startServe(ctx, bin, dbURL)
		if err != nil {
			return err
		}
		defer stop()
		serves = append(serves, addr)
	}
	transport := &http.Transport{MaxIdleConnsPerHost: 4 * e.o.clients, MaxIdleConns: 8 * e.o.clients}
	one := httptest.NewServer(roundRobin(transport, serves[0]))
	defer one.Close()
	pair := httptest.NewServer(roundRobin(transport, serves[1], serves[2]))
	defer pair.Close()

	heights, err := blockHeights(ctx, primaryURL)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * e.o.clients, MaxIdleConns: 4 * e.o.clients}}
	rng := rand.New(rand.NewPCG(e.o.seed, 11))
	kinds := make([]string, 0, len(methods)+1)
	bodiesOf := map[string][][]byte{}
	var mix [][]byte
	for _, m := range methods {
		bodies := make([][]byte, 2048)
		for i := range bodies {
			bodies[i] = []byte(m.make(rng, heights[rng.IntN(len(heights))]))
		}
		kinds, bodiesOf[m.name] = append(kinds, m.name), bodies
		mix = append(mix, bodies[:2048/len(methods)]...)
	}
	rng.Shuffle(len(mix), func(i, j int) { mix[i], mix[j] = mix[j], mix[i] })
	kinds, bodiesOf["mix of the six"] = append(kinds, "mix of the six"), mix

	r := &replicaReport{blocks: run.blocks, clients: e.o.clients}
	for _, kind := range kinds {
		bodies := bodiesOf[kind]
		row := replicaRow{method: kind}
		for _, target := range []string{one.URL, pair.URL} {
			// Warm: connections, caches and the contract compile.
			if _, err := runLoad(ctx, client, target, bodies, e.o.clients, 300*time.Millisecond); err != nil {
				return fmt.Errorf("%s: %w", kind, err)
			}
		}
		var ones, pairs []load
		for range e.o.runs {
			o, err := runLoad(ctx, client, one.URL, bodies, e.o.clients, e.o.serveTime)
			if err != nil {
				return fmt.Errorf("one serve, %s: %w", kind, err)
			}
			p, err := runLoad(ctx, client, pair.URL, bodies, e.o.clients, e.o.serveTime)
			if err != nil {
				return fmt.Errorf("two serves, %s: %w", kind, err)
			}
			ones, pairs = append(ones, o), append(pairs, p)
			row.ratios = append(row.ratios, p.rps/o.rps)
		}
		row.one, row.pair = medianLoad(ones), medianLoad(pairs)
		fmt.Fprintf(os.Stderr, "%-15s primary alone %7.0f req/s (p50 %s, errors %d)  primary + replica %7.0f req/s (p50 %s, errors %d)  ratio %.2f\n",
			kind, row.one.rps, row.one.p50, row.one.errors, row.pair.rps, row.pair.p50, row.pair.errors, row.pair.rps/row.one.rps)
		r.rows = append(r.rows, row)
	}
	e.report.replica = r
	return nil
}

// waitReplayed waits until the replica's indexer cursor is the primary's.
func waitReplayed(ctx context.Context, primaryURL, replicaURL string) error {
	cursor := func(dbURL string) (int64, error) {
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			return 0, err
		}
		defer conn.Close(context.WithoutCancel(ctx))
		var h int64
		err = conn.QueryRow(ctx, `SELECT height FROM indexer_cursor WHERE name = 'main'`).Scan(&h)
		return h, err
	}
	want, err := cursor(primaryURL)
	if err != nil {
		return fmt.Errorf("read the primary's cursor: %w", err)
	}
	deadline := time.NewTimer(5 * time.Minute)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if got, err := cursor(replicaURL); err == nil && got == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("the replica did not replay the cursor %d within 5 minutes", want)
		case <-tick.C:
		}
	}
}

// buildNearline builds this checkout's nearline binary into a temporary
// directory (remove it when done) and returns its path.
func buildNearline(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "nearline-bench-bin-")
	if err != nil {
		return "", fmt.Errorf("binary directory: %w", err)
	}
	bin := filepath.Join(dir, "nearline")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/nearline/nearline/cmd/nearline")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("build nearline: %w", err)
	}
	return bin, nil
}

// servingLine is serve's log line naming the address it listens on.
var servingLine = regexp.MustCompile(`msg="?serving JSON-RPC"? addr=(\S+)`)

// startServe starts `nearline serve` on dbURL on a free loopback port and
// returns its address and a function that stops it (SIGTERM, then waits).
func startServe(ctx context.Context, bin, dbURL string) (string, func(), error) {
	cmd := exec.Command(bin, "serve", "--database-url", dbURL, "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, fmt.Errorf("serve stderr: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start serve: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	addrs := make(chan string, 1)
	go func() {
		// Read to the end, so that serve never blocks on a full pipe.
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addrs <- m[1]:
				default:
				}
			} else if strings.Contains(sc.Text(), "level=ERROR") || strings.Contains(sc.Text(), "level=WARN") {
				fmt.Fprintln(os.Stderr, "serve:", sc.Text())
			}
		}
	}()
	select {
	case addr := <-addrs:
		return addr, stop, nil
	case <-time.After(time.Minute):
		stop()
		return "", nil, fmt.Errorf("serve on %s did not listen within a minute", dbURL)
	case <-ctx.Done():
		stop()
		return "", nil, ctx.Err()
	}
}

// roundRobin is a reverse proxy sending each request to the next of addrs
// in turn.
func roundRobin(transport http.RoundTripper, addrs ...string) http.Handler {
	targets := make([]*url.URL, len(addrs))
	for i, a := range addrs {
		targets[i] = &url.URL{Scheme: "http", Host: a}
	}
	var next atomic.Uint64
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(targets[(next.Add(1)-1)%uint64(len(targets))])
		},
		Transport: transport,
	}
}

// blockHeights lists the archive's block heights.
func blockHeights(ctx context.Context, dbURL string) ([]uint64, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, fmt.Errorf("list heights: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, "SELECT height FROM blocks ORDER BY height")
	if err != nil {
		return nil, fmt.Errorf("list heights: %w", err)
	}
	heights, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("list heights: %w", err)
	}
	out := make([]uint64, len(heights))
	for i, h := range heights {
		out[i] = uint64(h)
	}
	return out, nil
}

// printReplica writes the replica phase's rows.
func (r *report) printReplica(w io.Writer) {
	s := r.replica
	if s == nil {
		return
	}
	for _, row := range s.rows {
		ratios := make([]string, len(row.ratios))
		for i, x := range row.ratios {
			ratios[i] = fmt.Sprintf("%.2f", x)
		}
		fmt.Fprintf(w, "| serve `%s`, %d clients, %d blocks: primary + streaming replica, a `serve` on each behind a round-robin | %.0f req/s, p50 %s, p99 %s | one `serve` on the primary (same proxy): %.0f req/s, p50 %s, p99 %s | %.2f× (runs: %s) | – |\n",
			row.method, s.clients, s.blocks, row.pair.rps, ms(row.pair.p50), ms(row.pair.p99), row.one.rps, ms(row.one.p50), ms(row.one.p99),
			row.pair.rps/row.one.rps, strings.Join(ratios, ", "))
	}
}
