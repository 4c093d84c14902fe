package e2e

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
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
	simAddr := binary.Start(t, "sim", "--listen", e2ekit.AnyPort, "--seed", "9", "--shards", "4", "--block-time", "0",
		"--max-height", strconv.Itoa(maxHeight), "--genesis-out", genesisPath, "--protocol-version", "77",
		"--yield-timeout", yieldTimeout).ListenAddr(t, "simulator listening")
	sim := e2ekit.NewClient(simAddr)
	sim.WaitReady(t, 30*time.Second)
	shape := e2ekit.ReadShape(t, sim, maxHeight-20)
	genesis := e2ekit.ReadGenesis(t, genesisPath)
	simURL := "http://" + simAddr

	sources := []struct {
		name string
		args []string
	}{
		{"rpc", []string{"--upstream", simURL}},
		{"neardata", []string{"--source", "neardata", "--upstream", simURL, "--rpc-upstream", simURL}},
		{"lake", []string{"--source", "lake", "--upstream", simURL + "/lake", "--rpc-upstream", simURL}},
	}
	serves := make([]*e2ekit.Client, len(sources))
	for i, src := range sources {
		dbURL := e2ekit.FreshDatabase(t)
		args := append([]string{"index", "--database-url", dbURL, "--genesis", genesisPath,
			"--to", strconv.FormatUint(shape.Head, 10)}, src.args...)
		began := time.Now()
		if out, err := binary.Run(t, 5*time.Minute, args...); err != nil {
			t.Fatalf("nearline index --source %s: %v\n%s", src.name, err, e2ekit.Tail(out, 40))
		}
		t.Logf("--source %s indexed %d heights in %s", src.name, shape.Head+1, time.Since(began).Round(time.Millisecond))
		// validators is not archived: each serve forwards it to the simulator.
		addr := binary.Start(t, "serve", "--database-url", dbURL, "--listen", e2ekit.AnyPort, "--upstream", simURL).ListenAddr(t, "serving JSON-RPC")
		serves[i] = e2ekit.NewClient(addr)
		serves[i].WaitReady(t, 30*time.Second)
	}

	reqs, congested := e2ekit.EveryMethodRequests(t, sim, shape, genesis)
	for h := shape.GenesisHeight; h <= shape.Head+2; h++ {
		reqs = append(reqs, e2ekit.BlockRequests(t, sim, h)...)
	}
	for h := shape.GenesisHeight; h <= shape.Head; h += 10 {
		reqs = append(reqs, yieldViewRequests(h)...)
	}
	sameBytes := func(want, got json.RawMessage) bool { return bytes.Equal(want, got) }
	for i := 1; i < len(sources); i++ {
		tally := e2ekit.CompareWith(t, serves[0], serves[i], reqs, sameBytes)
		t.Logf("--source %s vs --source rpc: %d answers compared", sources[i].name, e2ekit.Total(tally))
		e2ekit.RequireEveryMethod(t, tally, congested)
		e2ekit.RequireResults(t, tally, "block", "chunk")
	}
	// The archive of the RPC source is the simulator's (the other
	// differential tests' claim), checked here on the same requests.
	tally := e2ekit.Compare(t, sim, serves[0], reqs)
	t.Logf("--source rpc vs the simulator: %d answers compared", e2ekit.Total(tally))
	// Relayed transactions and yields are in the chain the three sources indexed.
	countRelayedAndYielded(t, sim, shape).require(t)
}
