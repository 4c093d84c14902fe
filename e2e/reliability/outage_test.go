//go:build e2e

package reliability

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/internal/wait"
)

// outageLength is how long the upstream stays down under `run`.
const outageLength = 30 * time.Second

// TestRunOutlivesUpstreamOutage kills the simulator under `nearline run`
// (following the head, no --to) while it indexes, keeps it down for 30 s
// and starts it again on the same address: run must not exit, must answer
// every request from what it indexed all along, must say the upstream is
// unreachable (one log line, and /health failing with the reason) and back
// (one line, /health passing), and must then index the rest, so that the
// archive holds exactly what an uninterrupted run of the chain wrote.
func TestRunOutlivesUpstreamOutage(t *testing.T) {
	const seed, heights = 23, 1500
	addr := freeAddr(t)
	chain := startSimAt(t, addr, seed, heights, "--latency", "2ms")
	want := reference(t, chain)

	dbURL := e2ekit.FreshDatabase(t)
	p := binary.Start(t, "run", "--database-url", dbURL, "--upstream", chain.url(), "--listen", e2ekit.AnyPort,
		"--progress-interval", "1h", "--workers", "4")
	archive := e2ekit.NewClient(p.ListenAddr(t, "serving JSON-RPC"))
	archive.WaitReady(t, time.Minute)
	killedAt := e2ekit.WaitCursor(t, dbURL, chain.head/10, 2*time.Minute)
	if killedAt >= chain.head {
		t.Fatalf("run indexed the whole chain (%d) before the upstream went down: make it longer", chain.head)
	}
	if _, ok := stop(t, chain.proc, syscall.SIGKILL, 10*time.Second); !ok {
		t.Fatal("the simulator did not die within 10s of SIGKILL")
	}
	down := time.Now()

	// Down: every request answered from the archive, run still there, and
	// /health failing (once the client's own attempts are spent) with the
	// indexer's reason.
	answered, healthFailed := 0, false
	var reason string
	for time.Since(down) < outageLength {
		if err, exited := p.Exited(); exited {
			t.Fatalf("run exited %s into the outage: %v", time.Since(down).Round(time.Second), err)
		}
		height := finalHeight(t, archive)
		if height < killedAt {
			t.Fatalf("the archive's final block %d is below the cursor %d at the kill", height, killedAt)
		}
		answered++
		if healthStatus(t, archive) == http.StatusServiceUnavailable {
			healthFailed = true
			env, err := archive.Call("health", []any{})
			if err != nil {
				t.Fatalf("health method: %v", err)
			}
			reason = string(env.Error)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if !healthFailed {
		t.Errorf("/health never failed during the %s outage", outageLength)
	}
	if !strings.Contains(reason, "NO_NEW_BLOCKS") || !strings.Contains(reason, "The indexer cannot reach its upstream") {
		t.Errorf("health's error during the outage = %s, want NO_NEW_BLOCKS saying the upstream is unreachable", reason)
	}

	restarted := startSimAt(t, addr, seed, heights, "--latency", "2ms")
	if restarted.head != chain.head {
		t.Fatalf("the restarted simulator's head is %d, was %d", restarted.head, chain.head)
	}
	back := time.Now()
	e2ekit.WaitCursor(t, dbURL, chain.head, 5*time.Minute)
	resumed := time.Since(back)
	if !wait.Until(time.Minute, func() bool { return healthStatus(t, archive) == http.StatusOK }) {
		t.Error("/health did not pass again once the upstream was back")
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal run: %v", err)
	}
	if err, ok := p.WaitExit(30 * time.Second); !ok || err != nil {
		t.Fatalf("run after SIGTERM: exited %v, error %v; want exit status 0", ok, err)
	}
	out := p.Output()
	for line, n := range map[string]int{"upstream unreachable": 1, "upstream back": 1, "indexer finished": 0,
		"upstream call failed, retrying": 0} {
		if got := strings.Count(out, line); got != n {
			t.Errorf("run logged %q %d times, want %d", line, got, n)
		}
	}
	requireSameSums(t, want, tableSums(t, dbURL))
	t.Logf("upstream killed at cursor %d for %s; %d requests answered meanwhile; /health failed with %s; "+
		"indexing reached the head %d %s after the restart; archive equal to the uninterrupted run",
		killedAt, outageLength, answered, reason, chain.head, resumed.Round(time.Millisecond))
}

// freeAddr is a loopback address no one listens on now, for a simulator
// that must come back on the same one.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// finalHeight asks c for its final block's height.
func finalHeight(t *testing.T, c *e2ekit.Client) uint64 {
	t.Helper()
	env, err := c.Call("block", map[string]any{"finality": "final"})
	if err != nil || env.Result == nil {
		t.Fatalf("block final during the outage: %v %s", err, env.Error)
	}
	var b struct {
		Header struct {
			Height uint64 `json:"height"`
		} `json:"header"`
	}
	if err := json.Unmarshal(env.Result, &b); err != nil {
		t.Fatalf("decode block: %v", err)
	}
	return b.Header.Height
}

// healthStatus is the HTTP status of GET /health.
func healthStatus(t *testing.T, c *e2ekit.Client) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/health", nil)
	if err != nil {
		t.Fatalf("health request: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /health: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
