package e2e

import (
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestRunIndexesAndServesThenStopsOnSIGTERM checks `nearline run`: it
// migrates an empty database, indexes to --to while serving, keeps serving
// after the indexer is done, and exits 0 on SIGTERM.
func TestRunIndexesAndServesThenStopsOnSIGTERM(t *testing.T) {
	const maxHeight = 120
	dbURL := freshDatabase(t)

	simAddr := start(t, "sim", "--listen", anyPort, "--seed", "11", "--block-time", "0", "--max-height", strconv.Itoa(maxHeight)).
		listenAddr(t, "simulator listening")
	sim := newClient(simAddr)
	sim.waitReady(t, 30*time.Second)
	shape := readShape(t, sim, maxHeight-20)

	p := start(t, "run", "--database-url", dbURL, "--upstream", "http://"+simAddr,
		"--listen", anyPort, "--to", strconv.FormatUint(shape.head, 10))
	runAddr := p.listenAddr(t, "serving JSON-RPC")
	archive := newClient(runAddr)
	archive.waitReady(t, 30*time.Second)
	if got := waitHead(t, archive, shape.head, 2*time.Minute); got != shape.head {
		t.Fatalf("run's head = %d, want %d", got, shape.head)
	}
	var reqs []request
	for h := shape.genesisHeight; h <= shape.head; h += 7 {
		reqs = append(reqs, blockRequests(t, sim, h)...)
	}
	requireResults(t, compare(t, sim, archive, reqs), "block", "chunk")

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal run: %v", err)
	}
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("nearline run exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("nearline run did not exit within 30s of SIGTERM")
	}
}
