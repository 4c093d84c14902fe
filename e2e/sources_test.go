//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/verify/verifytest"
)

// TestSourcesIndexIdenticalArchives indexes one simulated chain three ways
// with the binary, `nearline index --source rpc`, `--source neardata` and
// `--source lake` (the simulator serves the documents beside its
// JSON-RPC), into three databases at once, and requires every answer of a
// seeded sample of the differential requests (every method, param form and
// error kind: blocks, chunks, block effects, changes, account, key, code,
// state and call_function queries, transactions, receipts) to be the same
// bytes from the three archives, and the RPC source's archive to answer as
// the simulator. The in-process tests compare the sources' archives table
// by table (indexer's docsource tests) and every request at every height.
func TestSourcesIndexIdenticalArchives(t *testing.T) {
	t.Parallel()
	const maxHeight = 100
	chain := differentialChain(t, maxHeight, "9")
	sim, shape, simURL, genesisPath := chain.Client, chain.Shape, chain.URL, chain.Genesis

	sources := []struct {
		name string
		args []string
	}{
		{"rpc", []string{"--upstream", simURL}},
		{"neardata", []string{"--source", "neardata", "--upstream", simURL, "--rpc-upstream", simURL}},
		{"lake", []string{"--source", "lake", "--upstream", simURL + "/lake", "--rpc-upstream", simURL}},
	}
	dbURLs := make([]string, len(sources))
	indexers := make([]*e2ekit.Process, len(sources))
	began := time.Now()
	for i, src := range sources {
		dbURLs[i] = e2ekit.FreshDatabase(t)
		indexers[i] = binary.Start(t, append([]string{"index", "--database-url", dbURLs[i], "--genesis", genesisPath,
			"--to", strconv.FormatUint(shape.Head, 10), "--progress-interval", "1h"}, src.args...)...)
	}
	serves := make([]*e2ekit.Client, len(sources))
	for i, src := range sources {
		if err, exited := indexers[i].WaitExit(5 * time.Minute); !exited || err != nil {
			t.Fatalf("nearline index --source %s: exited %v, %v\n%s", src.name, exited, err, e2ekit.Tail(indexers[i].Output(), 40))
		}
		t.Logf("--source %s indexed %d heights within %s", src.name, shape.Head+1, time.Since(began).Round(time.Millisecond))
		// validators is not archived: each serve forwards it to the simulator.
		_, _, serves[i] = binary.Serve(t, dbURLs[i], "--forward-url", simURL)
	}

	reqs := e2ekit.SampleRequests(t, sim, shape, sampleHeights, 9)
	reqs = append(reqs, e2ekit.FromPlan(verifytest.YieldViews(shape.Head))...)
	sameBytes := func(want, got json.RawMessage) bool { return bytes.Equal(want, got) }
	for i := 1; i < len(sources); i++ {
		tally := e2ekit.CompareWith(t, serves[0], serves[i], reqs, sameBytes)
		t.Logf("--source %s vs --source rpc: %d answers compared", sources[i].name, e2ekit.Total(tally))
		e2ekit.RequireEveryMethod(t, tally)
	}
	// The archive of the RPC source is the simulator's (the other
	// differential tests' claim), checked here on the same requests.
	tally := e2ekit.Compare(t, sim, serves[0], reqs)
	t.Logf("--source rpc vs the simulator: %d answers compared", e2ekit.Total(tally))
	// Relayed transactions and yields are in the chain the three sources indexed.
	countRelayedAndYielded(t, sim, shape).require(t)
}
