package e2e

import (
	"strconv"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
)

// TestSkeletonBlocksAndChunks is the end-to-end check of blocks and chunks: sim → index
// --to → serve, then every height's block and chunk requests answered the
// same by both, including the errors for heights with no block.
func TestSkeletonBlocksAndChunks(t *testing.T) {
	const maxHeight = 300
	dbURL := e2ekit.FreshDatabase(t)

	simAddr := binary.Start(t, "sim", "--listen", e2ekit.AnyPort, "--seed", "7", "--shards", "4",
		"--block-time", "0", "--max-height", strconv.Itoa(maxHeight)).ListenAddr(t, "simulator listening")
	sim := e2ekit.NewClient(simAddr)
	sim.WaitReady(t, 30*time.Second)
	// The last few heights may be skipped by the chain.
	shape := e2ekit.ReadShape(t, sim, maxHeight-20)

	if out, err := binary.Run(t, 3*time.Minute, "index", "--database-url", dbURL,
		"--upstream", "http://"+simAddr, "--to", strconv.FormatUint(shape.Head, 10)); err != nil {
		t.Fatalf("nearline index: %v\n%s", err, e2ekit.Tail(out, 40))
	}

	serveAddr := binary.Start(t, "serve", "--database-url", dbURL, "--listen", e2ekit.AnyPort).ListenAddr(t, "serving JSON-RPC")
	serve := e2ekit.NewClient(serveAddr)
	serve.WaitReady(t, 30*time.Second)

	var reqs []e2ekit.Request
	for h := shape.GenesisHeight; h <= shape.Head+3; h++ {
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
