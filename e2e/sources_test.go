package e2e

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestSourcesIndexIdenticalArchives indexes one simulated chain three ways
// with the binary, `nearline index --source rpc`, `--source neardata` and
// `--source lake` (the simulator serves the documents beside its
// JSON-RPC), into three databases, and requires every answer of the
// differential requests (every method at every height: blocks, chunks,
// block effects, changes, account, key, code, state and call_function
// queries, transactions, receipts) to be the same bytes from the three
// archives.
func TestSourcesIndexIdenticalArchives(t *testing.T) {
	const maxHeight = 100
	genesisPath := filepath.Join(t.TempDir(), "genesis.json")
	simAddr := start(t, "sim", "--listen", anyPort, "--seed", "9", "--shards", "4", "--block-time", "0",
		"--max-height", strconv.Itoa(maxHeight), "--genesis-out", genesisPath, "--protocol-version", "77",
		"--yield-timeout", yieldTimeout).listenAddr(t, "simulator listening")
	sim := newClient(simAddr)
	sim.waitReady(t, 30*time.Second)
	shape := readShape(t, sim, maxHeight-20)
	genesis := readGenesis(t, genesisPath)
	simURL := "http://" + simAddr

	sources := []struct {
		name string
		args []string
	}{
		{"rpc", []string{"--upstream", simURL}},
		{"neardata", []string{"--source", "neardata", "--upstream", simURL, "--rpc-upstream", simURL}},
		{"lake", []string{"--source", "lake", "--upstream", simURL + "/lake", "--rpc-upstream", simURL}},
	}
	serves := make([]*client, len(sources))
	for i, src := range sources {
		dbURL := freshDatabase(t)
		args := append([]string{"index", "--database-url", dbURL, "--genesis", genesisPath,
			"--to", strconv.FormatUint(shape.head, 10)}, src.args...)
		began := time.Now()
		if out, err := runToEnd(t, 5*time.Minute, args...); err != nil {
			t.Fatalf("nearline index --source %s: %v\n%s", src.name, err, tail(out, 40))
		}
		t.Logf("--source %s indexed %d heights in %s", src.name, shape.head+1, time.Since(began).Round(time.Millisecond))
		// validators is not archived: each serve forwards it to the simulator.
		addr := start(t, "serve", "--database-url", dbURL, "--listen", anyPort, "--upstream", simURL).listenAddr(t, "serving JSON-RPC")
		serves[i] = newClient(addr)
		serves[i].waitReady(t, 30*time.Second)
	}

	reqs, congested := everyMethodRequests(t, sim, shape, genesis)
	for h := shape.genesisHeight; h <= shape.head+2; h++ {
		reqs = append(reqs, blockRequests(t, sim, h)...)
	}
	for h := shape.genesisHeight; h <= shape.head; h += 10 {
		reqs = append(reqs, yieldViewRequests(h)...)
	}
	sameBytes := func(want, got json.RawMessage) bool { return bytes.Equal(want, got) }
	for i := 1; i < len(sources); i++ {
		tally := compareWith(t, serves[0], serves[i], reqs, sameBytes)
		t.Logf("--source %s vs --source rpc: %d answers compared", sources[i].name, total(tally))
		requireEveryMethod(t, tally, congested)
		requireResults(t, tally, "block", "chunk")
	}
	// The archive of the RPC source is the simulator's (the other
	// differential tests' claim), checked here on the same requests.
	tally := compare(t, sim, serves[0], reqs)
	t.Logf("--source rpc vs the simulator: %d answers compared", total(tally))
	// Relayed transactions and yields are in the chain the three sources indexed.
	countRelayedAndYielded(t, sim, shape).require(t)
}
