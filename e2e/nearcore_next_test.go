//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/internal/wait"
)

// TestNewerNearcoreIsServedAsItCame indexes a chain from an upstream that
// answers like a newer nearcore (`nearline sim --nearcore-next`: members
// Nearline does not model in accounts, access keys, chunk headers,
// transactions, outcomes and action receipts, in every answer and in
// genesis.json, and an action kind it does not model), then sends a
// seeded sample of the differential requests to the simulator and to
// serve: each result and error must be the same bytes (the in-process
// TestArchiveServesANewerNearcoreAsItCame asks every request at every
// height). The indexer counts the unknown action kind in /metrics.
func TestNewerNearcoreIsServedAsItCame(t *testing.T) {
	t.Parallel()
	const maxHeight = 160
	dbURL := e2ekit.FreshDatabase(t)

	chain := binary.Chain(t, maxHeight, "--nearcore-next", "--seed", "5", "--shards", "4")
	sim, shape, genesisPath := chain.Client, chain.Shape, chain.Genesis
	raw, err := os.ReadFile(genesisPath)
	if err != nil {
		t.Fatalf("read genesis: %v", err)
	}
	for _, member := range []string{`"next_account_field"`, `"gas_key_info"`} {
		if !bytes.Contains(raw, []byte(member)) {
			t.Fatalf("genesis.json of --nearcore-next has no %s", member)
		}
	}

	index := binary.Start(t, "index", "--database-url", dbURL, "--genesis", genesisPath, "--upstream", chain.URL,
		"--metrics-listen", e2ekit.AnyPort, "--progress-interval", "1h")
	metricsAddr := index.ListenAddr(t, "serving metrics")
	var metrics map[string]float64
	wait.For(t, 5*time.Minute, "the indexer to commit the head", func() bool {
		m, err := e2ekit.ScrapeMetrics(metricsAddr)
		if err != nil {
			return false
		}
		metrics = m
		return m["nearline_indexed_height"] >= float64(shape.Head)
	})
	const unknownAction = `nearline_unknown_variants_total{kind="action:TransferToGasKey"}`
	if metrics[unknownAction] == 0 {
		t.Errorf("the indexer counted no TransferToGasKey action: %s missing from /metrics", unknownAction)
	}
	t.Logf("%s %.0f", unknownAction, metrics[unknownAction])

	_, _, serve := binary.Serve(t, dbURL, "--forward-url", chain.URL)

	reqs := e2ekit.SampleRequests(t, sim, shape, sampleHeights, 5)
	// What --nearcore-next adds, one per kind of object: answers carrying
	// each are counted, so a comparison of nothing new cannot pass.
	nextMembers := []string{`"next_account_field"`, `"gas_key_info"`, `"proposed_split"`, `"nonce_index"`,
		`"compute_usage"`, `"refund_to"`, `"TransferToGasKey"`}
	carrying := map[string]int{}
	tally := e2ekit.CompareWith(t, sim, serve, reqs, func(want, got json.RawMessage) bool {
		for _, member := range nextMembers {
			if bytes.Contains(want, []byte(member)) {
				carrying[member]++
			}
		}
		return bytes.Equal(want, got)
	})
	e2ekit.LogTally(t, tally)
	for _, member := range nextMembers {
		t.Logf("answers carrying %-22s %5d", member, carrying[member])
		if carrying[member] == 0 {
			t.Errorf("no answer of the simulator carried %s", member)
		}
	}
	t.Logf("compared %d requests byte for byte over heights %d..%d", e2ekit.Total(tally), shape.GenesisHeight, shape.Head+2)
	e2ekit.RequireEveryMethod(t, tally)
}
