package e2e

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
)

// TestEveryMethodMatchesTheSimulator is the differential test: a
// simulated chain (several shards, skipped heights, missing chunks, real
// contracts) is indexed from its genesis, and for every indexed height the
// same requests (every method, every param form, malformed ones) go to the
// simulator and to serve; every result and every error must be identical.
func TestEveryMethodMatchesTheSimulator(t *testing.T) {
	const maxHeight = 160
	dbURL := e2ekit.FreshDatabase(t)
	genesisPath := filepath.Join(t.TempDir(), "genesis.json")

	// Protocol 77: global contracts are deployed, distributed and used.
	simAddr := binary.Start(t, "sim", "--listen", e2ekit.AnyPort, "--seed", "5", "--shards", "4", "--block-time", "0",
		"--max-height", strconv.Itoa(maxHeight), "--genesis-out", genesisPath, "--protocol-version", "77",
		"--yield-timeout", yieldTimeout).ListenAddr(t, "simulator listening")
	sim := e2ekit.NewClient(simAddr)
	sim.WaitReady(t, 30*time.Second)
	shape := e2ekit.ReadShape(t, sim, maxHeight-20)
	genesis := e2ekit.ReadGenesis(t, genesisPath)

	binary.Index(t, 5*time.Minute, dbURL, "http://"+simAddr, shape.Head, "--genesis", genesisPath)
	serveAddr := binary.Start(t, "serve", "--database-url", dbURL, "--listen", e2ekit.AnyPort, "--upstream", "http://"+simAddr).ListenAddr(t, "serving JSON-RPC")
	serve := e2ekit.NewClient(serveAddr)
	serve.WaitReady(t, 30*time.Second)

	reqs, congested := e2ekit.EveryMethodRequests(t, sim, shape, genesis)
	for h := shape.GenesisHeight; h <= shape.Head; h += 10 {
		reqs = append(reqs, yieldViewRequests(h)...)
	}
	requireProhibitedInView(t, sim, shape.Head)
	tally := e2ekit.Compare(t, sim, serve, reqs)
	e2ekit.LogTally(t, tally)
	t.Logf("compared %d requests over heights %d..%d", e2ekit.Total(tally), shape.GenesisHeight, shape.Head+2)
	e2ekit.RequireEveryMethod(t, tally, congested)
	e2ekit.RequireResults(t, tally, "query/view_global_contract_code", "query/view_global_contract_code_by_account_id")
	// Relayed transactions and yields are in the chain compared.
	traffic := countRelayedAndYielded(t, sim, shape)
	traffic.require(t)
	requireYieldOutcomesStored(t, dbURL, traffic.executedYields)
}
