//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
)

// TestSkeletonBlocksAndChunks is the end-to-end check of blocks and
// chunks from an archive indexed without --genesis: sim → index --to →
// serve, then the block and chunk requests of every seventh height and of
// the heights past the head, and malformed ones, answered the same by
// both. The in-process TestArchiveMatchesSimulator asks them at every
// height.
func TestSkeletonBlocksAndChunks(t *testing.T) {
	t.Parallel()
	const maxHeight = 120
	chain := binary.Chain(t, maxHeight, "--seed", "7", "--shards", "4")
	sim, shape := chain.Client, chain.Shape
	dbURL := binary.IndexChain(t, 3*time.Minute, chain)
	_, _, serve := binary.Serve(t, dbURL)

	var reqs []e2ekit.Request
	for h := shape.GenesisHeight; h <= shape.Head+3; h += 7 {
		reqs = append(reqs, e2ekit.BlockRequests(t, sim, h)...)
	}
	for h := shape.Head + 1; h <= shape.Head+3; h++ {
		reqs = append(reqs, e2ekit.BlockRequests(t, sim, h)...)
	}
	reqs = append(reqs,
		e2ekit.Request{Method: "block", Params: map[string]any{"block_id": "11111111111111111111111111111111"}},
		e2ekit.Request{Method: "chunk", Params: map[string]any{"chunk_id": "11111111111111111111111111111111"}},
		e2ekit.Request{Method: "block", Params: map[string]any{"finality": "final"}},
		e2ekit.Request{Method: "block", Params: map[string]any{"block_id": -1}},
		e2ekit.Request{Method: "block", Params: map[string]any{"block_id": 1, "finality": "final"}},
		e2ekit.Request{Method: "chunk", Params: map[string]any{}},
		e2ekit.Request{Method: "no_such_method", Params: map[string]any{}},
	)
	tally := e2ekit.Compare(t, sim, serve, reqs)
	t.Logf("compared %d requests over heights %d..%d", e2ekit.Total(tally), shape.GenesisHeight, shape.Head+3)
	e2ekit.RequireResults(t, tally, "block", "chunk")
}
