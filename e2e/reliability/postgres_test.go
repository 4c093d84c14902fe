//go:build e2e

package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/store/storetest"
)

// TestReliabilityPostgresConnectionsTerminated terminates every PostgreSQL
// backend of the test's own database again and again while `nearline
// index` and `nearline serve` run on it. Neither is restarted: index must
// still reach --to with the same content as an uninterrupted run, and
// serve must answer every request meanwhile (errors are fine, hangs, 5xx
// and leaked Go errors are not) and answer correctly afterwards.
func TestReliabilityPostgresConnectionsTerminated(t *testing.T) {
	t.Parallel()
	chain, want, dbURL := faultRun(t)
	dbName := databaseName(t, dbURL)
	admin := adminConn(t)

	idx := binary.Start(t, indexArgs(dbURL, chain.url(), chain.head, "--batch-size", "10", "--workers", "4")...)
	indexed := e2ekit.WaitCursor(t, dbURL, 100, time.Minute)
	srv := binary.Start(t, "serve", "--database-url", dbURL, "--listen", e2ekit.AnyPort)
	serveAddr := srv.ListenAddr(t, "serving JSON-RPC")
	serve := e2ekit.NewClient(serveAddr)
	serve.WaitReady(t, 30*time.Second)

	storm := 8 * time.Second
	if longReliability() {
		storm = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), storm)
	defer cancel()
	var terminated atomic.Int64
	stormDone := make(chan struct{})
	go func() {
		defer close(stormDone)
		for ctx.Err() == nil {
			n, err := terminateBackends(ctx, admin, dbName)
			if err != nil && ctx.Err() == nil {
				t.Errorf("terminate backends: %v", err)
				return
			}
			terminated.Add(n)
			time.Sleep(time.Duration(50+rand.IntN(150)) * time.Millisecond) // the storm's rhythm
		}
	}()
	tally := hammer(ctx, t, serveAddr, indexed, 4)
	<-stormDone
	if t.Failed() {
		return
	}
	t.Logf("storm of %s: %d backends terminated; serve answered %d results and %d error envelopes (%v), %d connection errors; slowest answer %s",
		storm, terminated.Load(), tally.results, tally.errors, tally.errorNames, tally.transport, tally.slowest.Round(time.Millisecond))
	if terminated.Load() < 10 {
		t.Fatalf("only %d backends terminated: the storm did not happen", terminated.Load())
	}
	if tally.errors == 0 {
		t.Errorf("no request failed while connections were being terminated: the storm did not reach serve")
	}

	if err, ok := idx.WaitExit(3 * time.Minute); !ok {
		t.Fatalf("index did not reach --to within 3 minutes after the storm\n%s", e2ekit.Tail(idx.Output(), 30))
	} else if err != nil {
		t.Fatalf("index did not survive terminated connections: %v\n%s", err, e2ekit.Tail(idx.Output(), 30))
	}
	storetest.RequireSameSums(t, want, tableSums(t, dbURL))
	retries := strings.Count(idx.Output(), "database unavailable; retrying")
	if retries == 0 {
		t.Error("the indexer never saw its connections terminated")
	}
	t.Logf("index retried %d times after terminated connections and reached --to %d; every table equal to the uninterrupted run",
		retries, chain.head)
	if _, ok := srv.Exited(); ok {
		t.Fatal("serve exited during the storm")
	}
	var reqs []e2ekit.Request
	for h := uint64(0); h <= chain.head; h += 37 {
		reqs = append(reqs, e2ekit.BlockRequests(t, chain.c, h)...)
	}
	reqs = append(reqs, e2ekit.Request{Method: "query", Params: map[string]any{"request_type": "view_account", "account_id": "alice.near", "block_id": chain.head / 2}})
	e2ekit.RequireResults(t, e2ekit.Compare(t, chain.c, serve, reqs), "block", "chunk", "query/view_account")
}

// terminateBackends ends every backend of the database but the caller's.
func terminateBackends(ctx context.Context, admin *pgx.Conn, dbName string) (int64, error) {
	rows, err := admin.Query(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = $1 AND pid <> pg_backend_pid()`, dbName)
	if err != nil {
		return 0, err
	}
	oks, err := pgx.CollectRows(rows, pgx.RowTo[bool])
	if err != nil {
		return 0, err
	}
	var n int64
	for _, ok := range oks {
		if ok {
			n++
		}
	}
	return n, nil
}

// loadTally counts what serve answered under hammer.
type loadTally struct {
	results, errors, transport int
	errorNames                 map[string]int
	slowest                    time.Duration
}

// hammer sends read requests to serve from workers clients until ctx
// ends. Every answer must be a JSON-RPC e2ekit.Envelope with HTTP 200, no Go error
// text, within the client timeout.
func hammer(ctx context.Context, t *testing.T, addr string, maxHeight uint64, workers int) loadTally {
	t.Helper()
	var mu sync.Mutex
	tally := loadTally{errorNames: map[string]int{}}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &http.Client{Timeout: 10 * time.Second}
			rng := rand.New(rand.NewPCG(uint64(w), 99))
			for ctx.Err() == nil {
				h := rng.Uint64N(maxHeight + 1)
				var body string
				switch rng.IntN(3) {
				case 0:
					body = fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":%d}}`, h)
				case 1:
					body = fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"query","params":{"request_type":"view_account","account_id":"alice.near","block_id":%d}}`, h)
				default:
					body = fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"EXPERIMENTAL_changes_in_block","params":{"block_id":%d}}`, h)
				}
				began := time.Now()
				resp, err := hc.Post("http://"+addr, "application/json", bytes.NewReader([]byte(body)))
				if err != nil {
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						t.Errorf("request hung for %s: %s", time.Since(began).Round(time.Millisecond), body)
						return
					}
					mu.Lock()
					tally.transport++
					mu.Unlock()
					continue
				}
				raw, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					mu.Lock()
					tally.transport++
					mu.Unlock()
					continue
				}
				var env struct {
					Result json.RawMessage `json:"result"`
					Raw    json.RawMessage `json:"error"`
					Error  *struct {
						Name  string `json:"name"`
						Cause struct {
							Name string `json:"name"`
						} `json:"cause"`
					} `json:"-"`
				}
				decodeErr := json.Unmarshal(raw, &env)
				if decodeErr == nil && env.Raw != nil {
					decodeErr = json.Unmarshal(env.Raw, &env.Error)
				}
				switch {
				case resp.StatusCode != http.StatusOK:
					t.Errorf("HTTP %d for %s: %.300s", resp.StatusCode, body, raw)
					return
				case decodeErr != nil || (env.Result == nil && env.Error == nil):
					t.Errorf("not a JSON-RPC e2ekit.Envelope for %s: %.300s", body, raw)
					return
				case leaksGoError(string(env.Raw)) != "":
					t.Errorf("error leaks %q for %s: %s", leaksGoError(string(env.Raw)), body, env.Raw)
					return
				}
				mu.Lock()
				tally.slowest = max(tally.slowest, time.Since(began))
				if env.Error != nil {
					tally.errors++
					tally.errorNames[env.Error.Name+"/"+env.Error.Cause.Name]++
				} else {
					tally.results++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return tally
}

// TestReliabilityPostgresRestart (NEARLINE_TEST_PG_RESTART=1 only) really
// restarts the PostgreSQL server with pg_ctlcluster while index and serve
// run. It stops every other session on the server, so it never runs by
// default: run it alone, e.g.
//
//	NEARLINE_TEST_PG_RESTART=1 go test -tags e2e ./e2e/reliability -run TestReliabilityPostgresRestart -v
//
// It restarts the local cluster (pg_ctlcluster) listening on the port of
// NEARLINE_TEST_DATABASE_URL, or NEARLINE_PG_CLUSTER="VERSION NAME".
func TestReliabilityPostgresRestart(t *testing.T) {
	t.Parallel()
	if os.Getenv("NEARLINE_TEST_PG_RESTART") != "1" {
		t.Skip("restarts the shared PostgreSQL server; set NEARLINE_TEST_PG_RESTART=1 to run")
	}
	cluster := os.Getenv("NEARLINE_PG_CLUSTER")
	if cluster == "" {
		cluster = clusterOnPort(t, os.Getenv("NEARLINE_TEST_DATABASE_URL"))
	}
	chain, want, dbURL := faultRun(t)
	idx := binary.Start(t, indexArgs(dbURL, chain.url(), chain.head, "--batch-size", "10", "--workers", "4")...)
	indexed := e2ekit.WaitCursor(t, dbURL, 100, time.Minute)
	serveAddr := binary.Start(t, "serve", "--database-url", dbURL, "--listen", e2ekit.AnyPort).ListenAddr(t, "serving JSON-RPC")
	serve := e2ekit.NewClient(serveAddr)
	serve.WaitReady(t, 30*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	restarted := make(chan error, 1)
	go func() {
		time.Sleep(2 * time.Second) // let the load run before the restart
		args := append([]string{}, splitFields(cluster)...)
		out, err := exec.Command("pg_ctlcluster", append(args, "restart")...).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("pg_ctlcluster %s restart: %v: %s", cluster, err, out)
		}
		restarted <- err
	}()
	tally := hammer(ctx, t, serveAddr, indexed, 4)
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	t.Logf("through a server restart serve answered %d results, %d errors (%v), %d connection errors; slowest answer %s",
		tally.results, tally.errors, tally.errorNames, tally.transport, tally.slowest.Round(time.Millisecond))
	if err, ok := idx.WaitExit(3 * time.Minute); !ok || err != nil {
		t.Fatalf("index did not survive the restart (exited %v, err %v)\n%s", ok, err, e2ekit.Tail(idx.Output(), 30))
	}
	storetest.RequireSameSums(t, want, tableSums(t, dbURL))
	retries := strings.Count(idx.Output(), "database unavailable; retrying")
	if retries == 0 {
		t.Error("the indexer never saw the restart")
	}
	t.Logf("index retried %d times through the restart and reached --to %d; every table equal to the uninterrupted run", retries, chain.head)
	reqs := e2ekit.BlockRequests(t, chain.c, chain.head/2)
	e2ekit.RequireResults(t, e2ekit.Compare(t, chain.c, serve, reqs), "block")
}

// clusterOnPort finds the local cluster (pg_lsclusters) listening on the
// port of the test server's URL.
func clusterOnPort(t *testing.T, serverURL string) string {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("parse NEARLINE_TEST_DATABASE_URL: %v", err)
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	out, err := exec.Command("pg_lsclusters", "-h").Output()
	if err != nil {
		t.Fatalf("pg_lsclusters (set NEARLINE_PG_CLUSTER=\"VERSION NAME\"): %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[2] == port {
			return f[0] + " " + f[1]
		}
	}
	t.Fatalf("no local cluster listens on port %s (set NEARLINE_PG_CLUSTER=\"VERSION NAME\")", port)
	return ""
}

func splitFields(s string) []string {
	var out []string
	for _, f := range bytes.Fields([]byte(s)) {
		out = append(out, string(f))
	}
	return out
}
