package e2e

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/near"
)

// TestEveryMethodMatchesTheSimulatorAcrossSplits is the differential test
// over a chain that reshards: `nearline sim --reshard-at 40,70,100` splits
// a shard at the epoch starts 60, 90 and 120 (epochs of 30 heights; 4 → 7
// shards, ids no longer 0..n-1, protocol 77 → 80), with global contracts
// and a missing chunk rate high enough that children miss their first
// chunks, and relayed and yielded traffic (a 20-block yield timeout).
// `nearline index` + `nearline serve` must answer every method
// (everyMethodRequests) identically to the simulator at every height,
// before, at and after each split, and chunk and congestion level by block
// and shard id for every shard id any layout named, at every height.
func TestEveryMethodMatchesTheSimulatorAcrossSplits(t *testing.T) {
	const maxHeight = 150
	dbURL := e2ekit.FreshDatabase(t)
	genesisPath := filepath.Join(t.TempDir(), "genesis.json")

	// Seed 3: children miss their first chunks (7 chunk headers repeat a
	// parent's); the draw moves with the traffic mix (seed 5 stopped
	// doing it when yields and relayed transactions joined the chain).
	simAddr := binary.Start(t, "sim", "--listen", e2ekit.AnyPort, "--seed", "3", "--shards", "4", "--block-time", "0",
		"--max-height", strconv.Itoa(maxHeight), "--genesis-out", genesisPath, "--protocol-version", "77",
		"--epoch-length", "30", "--reshard-at", "40,70,100", "--missing-chunk-rate", "0.25", "--yield-timeout", "20").ListenAddr(t, "simulator listening")
	sim := e2ekit.NewClient(simAddr)
	sim.WaitReady(t, 30*time.Second)
	shape := e2ekit.ReadShape(t, sim, maxHeight-20)
	genesis := e2ekit.ReadGenesis(t, genesisPath)

	binary.Index(t, 5*time.Minute, dbURL, "http://"+simAddr, shape.Head, "--genesis", genesisPath)
	serveAddr := binary.Start(t, "serve", "--database-url", dbURL, "--listen", e2ekit.AnyPort, "--upstream", "http://"+simAddr).ListenAddr(t, "serving JSON-RPC")
	serve := e2ekit.NewClient(serveAddr)
	serve.WaitReady(t, 30*time.Second)

	// Relayed transactions and yields (resumed and timed out) cross the
	// splits too.
	countRelayedAndYielded(t, sim, shape).require(t)
	reqs, congested := e2ekit.EveryMethodRequests(t, sim, shape, genesis)
	layouts := readLayouts(t, sim, shape)
	reqs = append(reqs, layouts.requests...)
	tally := e2ekit.Compare(t, sim, serve, reqs)
	e2ekit.LogTally(t, tally)
	t.Logf("compared %d requests over heights %d..%d; shard ids by height: %v; protocol versions %v; %d chunk headers repeated a parent's",
		e2ekit.Total(tally), shape.GenesisHeight, shape.Head+2, layouts.changes, layouts.versions, layouts.repeats)
	e2ekit.RequireEveryMethod(t, tally, congested)
	e2ekit.RequireResults(t, tally, "block", "chunk", "query/view_global_contract_code", "query/view_global_contract_code_by_account_id")
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
// EXPERIMENTAL_protocol_config and asks, at every height, block (by height
// and by hash), chunk (by height
// and by hash) and EXPERIMENTAL_congestion_level of every shard id any
// layout or chunk header has named so far.
func readLayouts(t *testing.T, sim *e2ekit.Client, shape e2ekit.ChainShape) splitLayouts {
	t.Helper()
	out := splitLayouts{changes: map[uint64][]uint64{}}
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
		out.requests = append(out.requests,
			e2ekit.Request{Method: "block", Params: map[string]any{"block_id": h}},
			e2ekit.Request{Method: "block", Params: map[string]any{"block_id": block.Header.Hash}})
		for _, id := range slices.Sorted(maps.Keys(seen)) {
			out.requests = append(out.requests,
				e2ekit.Request{Method: "chunk", Params: map[string]any{"block_id": h, "shard_id": id}},
				e2ekit.Request{Method: "chunk", Params: map[string]any{"block_id": block.Header.Hash, "shard_id": id}},
				e2ekit.Request{Method: "EXPERIMENTAL_congestion_level", Params: map[string]any{"block_id": h, "shard_id": id}})
		}
	}
	return out
}
