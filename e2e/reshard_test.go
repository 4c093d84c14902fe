//go:build e2e

package e2e

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/verify/verifytest"
)

// TestEveryMethodMatchesTheSimulatorAcrossSplits is the differential test
// through the binary over a chain that reshards: `nearline sim
// --reshard-at 40,70,100` splits a shard at the epoch starts 60, 90 and
// 120 (epochs of 30 heights; 4 → 7 shards, ids no longer 0..n-1, protocol
// 77 → 80), with global contracts and a missing chunk rate high enough
// that children miss their first chunks, and relayed and yielded traffic
// (a 20-block yield timeout). `nearline index` + `nearline serve` must
// answer a seeded sample of the differential requests identically to the
// simulator, and chunk and congestion level by block and shard id for
// every shard id any layout named, just before, at and just after each
// split and at every tenth height. The in-process
// TestArchiveMatchesSimulatorAcrossSplits asks every request at every
// height.
func TestEveryMethodMatchesTheSimulatorAcrossSplits(t *testing.T) {
	t.Parallel()
	const maxHeight = 150

	// Seed 3: children miss their first chunks (7 chunk headers repeat a
	// parent's); the draw moves with the traffic mix (seed 5 stopped
	// doing it when yields and relayed transactions joined the chain).
	chain := differentialChain(t, maxHeight, "3",
		"--epoch-length", "30", "--reshard-at", "40,70,100", "--missing-chunk-rate", "0.25")
	sim, shape := chain.Client, chain.Shape

	dbURL := binary.IndexChain(t, 5*time.Minute, chain, "--genesis", chain.Genesis)
	_, _, serve := binary.Serve(t, dbURL, "--forward-url", chain.URL)

	// Relayed transactions and yields (resumed and timed out) cross the
	// splits too.
	countRelayedAndYielded(t, sim, shape).require(t)
	reqs := e2ekit.SampleRequests(t, sim, shape, sampleHeights, 3)
	layouts := readLayouts(t, sim, shape)
	reqs = append(reqs, layouts.requests...)
	tally := e2ekit.Compare(t, sim, serve, reqs)
	e2ekit.LogTally(t, tally)
	t.Logf("compared %d requests over heights %d..%d; shard ids by height: %v; protocol versions %v; %d chunk headers repeated a parent's",
		e2ekit.Total(tally), shape.GenesisHeight, shape.Head+2, layouts.changes, layouts.versions, layouts.repeats)
	e2ekit.RequireEveryMethod(t, tally)
	e2ekit.RequireResults(t, tally, verifytest.GlobalKinds()...)
	if o := tally["chunk"]; o == nil || o.Errors == 0 {
		t.Errorf("no chunk request was refused (a split shard's id after its split)")
	}
	if len(layouts.changes) != 4 {
		t.Errorf("shard ids changed at %d heights, want 3 splits after genesis: %v", len(layouts.changes)-1, layouts.changes)
	}
	if !slices.Equal(layouts.versions, []uint32{77, 78, 79, 80}) {
		t.Errorf("protocol versions %v, want 77 to 80 (one up per split)", layouts.versions)
	}
	if ids := layouts.changes[slices.Max(slices.Collect(maps.Keys(layouts.changes)))]; slices.Max(ids) < uint64(len(ids)) {
		t.Errorf("last layout's shard ids %v are still 0..n-1", ids)
	}
	if layouts.repeats == 0 {
		t.Errorf("no child missed its first chunk: the chain does not exercise a parent's repeated chunk header")
	}
}

// splitLayouts is what readLayouts found: the shard requests, and at which
// heights the layout's shard ids changed.
type splitLayouts struct {
	requests []e2ekit.Request
	changes  map[uint64][]uint64 // height → the layout's shard ids from it
	versions []uint32
	repeats  int // chunk headers naming another shard than the layout's at their index
}

// readLayouts reads each height's layout off the simulator's
// EXPERIMENTAL_protocol_config and asks block (by height and by hash),
// chunk (by height and by hash) and EXPERIMENTAL_congestion_level of every
// shard id any layout or chunk header has named so far, at the blocks next
// to a change of layout (before, at, after it) and every tenth height.
func readLayouts(t *testing.T, sim *e2ekit.Client, shape e2ekit.ChainShape) splitLayouts {
	t.Helper()
	out := splitLayouts{changes: map[uint64][]uint64{}}
	type blockShards struct {
		height uint64
		hash   string
		ids    []uint64 // every shard id named up to the block
	}
	var blocks []blockShards
	seen := map[uint64]bool{}
	var last []uint64
	for h := shape.GenesisHeight; h <= shape.Head; h++ {
		env, err := sim.Call("block", map[string]any{"block_id": h})
		if err != nil {
			t.Fatalf("block %d from sim: %v", h, err)
		}
		if env.Result == nil {
			continue
		}
		var block near.BlockView
		if err := json.Unmarshal(env.Result, &block); err != nil {
			t.Fatalf("decode block %d: %v", h, err)
		}
		env, err = sim.Call("EXPERIMENTAL_protocol_config", map[string]any{"block_id": h})
		if err != nil || env.Result == nil {
			t.Fatalf("protocol config %d from sim: %v %s", h, err, env.Error)
		}
		var cfg struct {
			ProtocolVersion uint32           `json:"protocol_version"`
			ShardLayout     near.ShardLayout `json:"shard_layout"`
		}
		if err := json.Unmarshal(env.Result, &cfg); err != nil {
			t.Fatalf("decode protocol config %d: %v", h, err)
		}
		ids := cfg.ShardLayout.ShardIDs()
		if !slices.Equal(ids, last) {
			out.changes[h], last = ids, ids
			out.versions = append(out.versions, cfg.ProtocolVersion)
		}
		if len(ids) != len(block.Chunks) {
			t.Fatalf("height %d: %d chunks under a layout of %d shards", h, len(block.Chunks), len(ids))
		}
		for i, c := range block.Chunks {
			seen[c.ShardID], seen[ids[i]] = true, true
			if c.ShardID != ids[i] {
				out.repeats++
			}
		}
		blocks = append(blocks, blockShards{height: h, hash: block.Header.Hash, ids: slices.Sorted(maps.Keys(seen))})
	}
	for i, b := range blocks {
		asked := b.height%10 == 0
		for j := max(0, i-1); j <= min(len(blocks)-1, i+1); j++ {
			_, changed := out.changes[blocks[j].height]
			asked = asked || changed
		}
		if !asked {
			continue
		}
		out.requests = append(out.requests,
			e2ekit.Request{Method: "block", Params: map[string]any{"block_id": b.height}},
			e2ekit.Request{Method: "block", Params: map[string]any{"block_id": b.hash}})
		for _, id := range b.ids {
			out.requests = append(out.requests,
				e2ekit.Request{Method: "chunk", Params: map[string]any{"block_id": b.height, "shard_id": id}},
				e2ekit.Request{Method: "chunk", Params: map[string]any{"block_id": b.hash, "shard_id": id}},
				e2ekit.Request{Method: "EXPERIMENTAL_congestion_level", Params: map[string]any{"block_id": b.height, "shard_id": id}})
		}
	}
	return out
}
