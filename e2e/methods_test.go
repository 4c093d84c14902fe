//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/verify/verifytest"
)

// TestEveryMethodMatchesTheSimulator is the differential test through the
// binary: a simulated chain (several shards, skipped heights, missing
// chunks, real contracts, global contracts, relayed transactions and
// yields) is indexed from its genesis by `nearline index --genesis`, and a
// seeded sample of the differential requests (every method, param form
// and error kind at least once, malformed requests and the heights past
// the head among them) goes to the simulator and to `nearline serve
// --upstream`: every result and every error must be identical. The
// in-process TestArchiveMatchesSimulator* ask every request at every
// height; this proves the process's wiring.
func TestEveryMethodMatchesTheSimulator(t *testing.T) {
	t.Parallel()
	const maxHeight = 160

	// Protocol 77: global contracts are deployed, distributed and used.
	chain := differentialChain(t, maxHeight, "5")
	sim, shape := chain.Client, chain.Shape

	dbURL := binary.IndexChain(t, 5*time.Minute, chain, "--genesis", chain.Genesis)
	_, _, serve := binary.Serve(t, dbURL, "--forward-url", chain.URL)

	reqs := e2ekit.SampleRequests(t, sim, shape, sampleHeights, 5)
	reqs = append(reqs, e2ekit.FromPlan(verifytest.YieldViews(shape.Head))...)
	requireProhibitedInView(t, sim, shape.Head)
	tally := e2ekit.Compare(t, sim, serve, reqs)
	e2ekit.LogTally(t, tally)
	t.Logf("compared %d requests over heights %d..%d", e2ekit.Total(tally), shape.GenesisHeight, shape.Head+2)
	e2ekit.RequireEveryMethod(t, tally)
	e2ekit.RequireResults(t, tally, verifytest.GlobalKinds()...)
	// Relayed transactions and yields are in the chain compared.
	traffic := countRelayedAndYielded(t, sim, shape)
	traffic.require(t)
	requireYieldOutcomesStored(t, dbURL, traffic.executedYields)
}
