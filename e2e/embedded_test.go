//go:build e2e

package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/internal/pgcluster"
)

// TestRunWithTheEmbeddedDatabase runs `nearline run` with no database
// variable or URL against the simulator: it makes the embedded PostgreSQL
// in --data-dir from the machine's binaries, migrates it, indexes and
// serves the simulator's blocks as the simulator answers them, and stops
// the server on SIGTERM; `nearline status` then finds the archive there,
// starting and stopping the server again.
func TestRunWithTheEmbeddedDatabase(t *testing.T) {
	dataDir := embeddedDataDir(t, "nearline-e2e-embedded-", "NEARLINE_DATABASE_URL", "NEARLINE_DATA_DIR", "NEARLINE_PG_BIN")

	const maxHeight = 40
	simAddr, sim := binary.Sim(t, "--seed", "7", "--block-time", "0", "--max-height", strconv.Itoa(maxHeight))
	shape := e2ekit.ReadShape(t, sim, maxHeight-10)

	p := binary.Start(t, "run", "--data-dir", dataDir, "--upstream", "http://"+simAddr, "--listen", e2ekit.AnyPort,
		"--to", strconv.FormatUint(shape.Head, 10))
	archive := e2ekit.NewClient(p.ListenAddr(t, "serving JSON-RPC"))
	archive.WaitReady(t, time.Minute)
	if got := e2ekit.WaitHead(t, archive, shape.Head, 2*time.Minute); got != shape.Head {
		t.Fatalf("run's head = %d, want %d", got, shape.Head)
	}
	// The first and the last block, each with its chunks.
	reqs := append(e2ekit.BlockRequests(t, sim, shape.GenesisHeight), e2ekit.BlockRequests(t, sim, shape.Head)...)
	e2ekit.RequireResults(t, e2ekit.Compare(t, sim, archive, reqs), "block", "chunk")
	if !strings.Contains(p.Output(), "created=true started=true") {
		t.Errorf("run did not report making the embedded PostgreSQL:\n%s", e2ekit.Tail(p.Output(), 20))
	}

	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal run: %v", err)
	}
	if err, ok := p.WaitExit(time.Minute); !ok || err != nil {
		t.Fatalf("nearline run after SIGTERM: exited %v (in time: %v), want 0", err, ok)
	}
	if !strings.Contains(p.Output(), "embedded PostgreSQL stopped") {
		t.Errorf("run did not stop the embedded PostgreSQL:\n%s", e2ekit.Tail(p.Output(), 20))
	}
	if _, err := os.Stat(filepath.Join(dataDir, "pgdata", "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("the embedded PostgreSQL still runs after run exited (postmaster.pid: %v)", err)
	}

	out, err := binary.Run(t, time.Minute, "status", "--data-dir", dataDir)
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	if want := "indexed range:   " + strconv.FormatUint(shape.GenesisHeight, 10) + "-" + strconv.FormatUint(shape.Head, 10); !strings.Contains(out, want) {
		t.Errorf("status does not print %q:\n%s", want, out)
	}
}

// TestRunSimIsTheOneCommandTrial runs the README's one command, `nearline
// run --sim` with nothing set up but PostgreSQL's binaries: it makes the
// embedded PostgreSQL, a simulated chain in-process, and serves its blocks
// within a minute; flags that name another upstream are refused.
func TestRunSimIsTheOneCommandTrial(t *testing.T) {
	dataDir := embeddedDataDir(t, "nearline-e2e-sim-", "NEARLINE_DATABASE_URL", "NEARLINE_DATA_DIR", "NEARLINE_PG_BIN",
		"NEARLINE_UPSTREAM", "NEARLINE_GENESIS")

	out, err := binary.Run(t, time.Minute, "run", "--sim", "--upstream", "http://127.0.0.1:1", "--data-dir", dataDir)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(out, "--sim makes its own upstream") {
		t.Fatalf("run --sim --upstream: %v, want exit status 2 naming --sim:\n%s", err, out)
	}

	p := binary.Start(t, "run", "--sim", "--data-dir", dataDir, "--listen", e2ekit.AnyPort)
	archive := e2ekit.NewClient(p.ListenAddr(t, "serving JSON-RPC"))
	archive.WaitReady(t, time.Minute)
	if got := e2ekit.WaitHead(t, archive, 3, time.Minute); got < 3 {
		t.Fatalf("run --sim's head = %d, want 3 or more", got)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal run: %v", err)
	}
	if err, ok := p.WaitExit(time.Minute); !ok || err != nil {
		t.Fatalf("nearline run --sim after SIGTERM: exited %v (in time: %v), want 0", err, ok)
	}
}

// TestRunSimResumesWhereItStopped restarts `nearline run --sim` on the
// archive it filled: the simulator regenerates its chain up to the
// archive's head at once, so the archive grows again within seconds
// instead of waiting while the chain is replayed at a block a second.
func TestRunSimResumesWhereItStopped(t *testing.T) {
	for _, v := range []string{"NEARLINE_UPSTREAM", "NEARLINE_GENESIS", "NEARLINE_SOURCE"} {
		t.Setenv(v, "")
	}
	dbURL := e2ekit.FreshDatabase(t)
	args := []string{"run", "--sim", "--database-url", dbURL, "--listen", e2ekit.AnyPort}

	p := binary.Start(t, args...)
	e2ekit.WaitCursor(t, dbURL, 30, 2*time.Minute)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal run: %v", err)
	}
	if err, ok := p.WaitExit(time.Minute); !ok || err != nil {
		t.Fatalf("nearline run --sim after SIGTERM: exited %v (in time: %v), want 0", err, ok)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	stopped, ok := e2ekit.CursorHeight(ctx, dbURL)
	cancel()
	if !ok {
		t.Fatal("no cursor after the first run")
	}

	// A simulator replaying from its genesis at a block a second cannot
	// give the archive height stopped+2 before stopped+2 seconds.
	began := time.Now()
	p = binary.Start(t, args...)
	got := e2ekit.WaitCursor(t, dbURL, stopped+2, time.Duration(stopped)*time.Second)
	t.Logf("stopped at %d; the restarted run indexed %d %s after its start", stopped, got, time.Since(began).Round(time.Millisecond))
	if !strings.Contains(p.Output(), "chain regenerated up to the height to resume at") {
		t.Errorf("the restarted simulator did not say it resumed:\n%s", e2ekit.Tail(p.Output(), 20))
	}
}

// embeddedDataDir clears the environment variables vars (so that nothing
// but the flags sets up the run) and returns a --data-dir for an embedded
// PostgreSQL under a new temporary folder named by prefix (pgcluster's,
// one the postgres user can pass), removed when the test ends.
func embeddedDataDir(t *testing.T, prefix string, vars ...string) string {
	t.Helper()
	for _, v := range vars {
		t.Setenv(v, "")
	}
	parent, err := pgcluster.MkdirTemp(prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	return filepath.Join(parent, "data")
}
