//go:build e2e

package e2e

import (
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
)

// TestRunIndexesAndServesThenStopsOnSIGTERM checks `nearline run`: it
// migrates an empty database, indexes to --to while serving, keeps serving
// after the indexer is done, and exits 0 on SIGTERM.
func TestRunIndexesAndServesThenStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	const maxHeight = 120
	dbURL := e2ekit.FreshDatabase(t)

	chain := binary.Chain(t, maxHeight, "--seed", "11")
	sim, shape := chain.Client, chain.Shape

	p := binary.Start(t, "run", "--database-url", dbURL, "--upstream", chain.URL,
		"--listen", e2ekit.AnyPort, "--to", strconv.FormatUint(shape.Head, 10))
	runAddr := p.ListenAddr(t, "serving JSON-RPC")
	archive := e2ekit.NewClient(runAddr)
	archive.WaitReady(t, 30*time.Second)
	if got := e2ekit.WaitHead(t, archive, shape.Head, 2*time.Minute); got != shape.Head {
		t.Fatalf("run's head = %d, want %d", got, shape.Head)
	}
	var reqs []e2ekit.Request
	for h := shape.GenesisHeight; h <= shape.Head; h += 7 {
		reqs = append(reqs, e2ekit.BlockRequests(t, sim, h)...)
	}
	e2ekit.RequireResults(t, e2ekit.Compare(t, sim, archive, reqs), "block", "chunk")

	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal run: %v", err)
	}
	err, ok := p.WaitExit(30 * time.Second)
	if !ok {
		t.Fatal("nearline run did not exit within 30s of SIGTERM")
	}
	if err != nil {
		t.Fatalf("nearline run exited with %v after SIGTERM, want 0", err)
	}
}
