package e2e

import (
	"encoding/json"

	"strconv"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/wait"
)

// request is one JSON-RPC call sent to both the simulator and serve.
type request struct {
	method string
	params any
}

func (r request) String() string {
	p, _ := json.Marshal(r.params)
	return r.method + " " + string(p)
}

// chainShape is what the differential test reads off the simulator to
// build its requests.
type chainShape struct {
	genesisHeight uint64
	head          uint64
}

func readShape(t *testing.T, sim *client, minHead uint64) chainShape {
	t.Helper()
	head := waitHead(t, sim, minHead, 60*time.Second)
	env, err := sim.call("genesis_config", nil)
	if err != nil || env.Result == nil {
		t.Fatalf("genesis_config from sim: %v %s", err, env.Error)
	}
	var genesis struct {
		GenesisHeight uint64 `json:"genesis_height"`
	}
	if err := json.Unmarshal(env.Result, &genesis); err != nil {
		t.Fatalf("decode genesis_config: %v", err)
	}
	return chainShape{genesisHeight: genesis.GenesisHeight, head: head}
}

// waitHead polls the final block until its height has reached minHead and
// stayed put for a few polls, and returns that height.
func waitHead(t testing.TB, c *client, minHead uint64, timeout time.Duration) uint64 {
	t.Helper()
	var (
		last, stable int
		env          envelope
		err          error
	)
	settled := wait.Until(timeout, func() bool {
		env, err = c.call("block", map[string]any{"finality": "final"})
		if err != nil || env.Result == nil {
			return false
		}
		var head struct {
			Header struct {
				Height int `json:"height"`
			} `json:"header"`
		}
		if err = json.Unmarshal(env.Result, &head); err != nil {
			return false
		}
		if head.Header.Height == last {
			stable++
		} else {
			last, stable = head.Header.Height, 0
		}
		return uint64(last) >= minHead && stable >= 5
	})
	if !settled {
		t.Fatalf("%s: final head did not reach %d and settle within %s (at %d; %v %s)", c.url, minHead, timeout, last, err, env.Error)
	}
	return uint64(last)
}

// blockRequests lists the block and chunk requests for one height: by
// height, by hash, every shard by (block_id, shard_id) and by chunk_id, a
// shard that does not exist, and an unknown chunk hash.
func blockRequests(t *testing.T, sim *client, height uint64) []request {
	t.Helper()
	reqs := []request{
		{"block", map[string]any{"block_id": height}},
		{"chunk", map[string]any{"block_id": height, "shard_id": 0}},
	}
	env, err := sim.call("block", map[string]any{"block_id": height})
	if err != nil {
		t.Fatalf("block %d from sim: %v", height, err)
	}
	if env.Result == nil {
		return reqs
	}
	var block struct {
		Header struct {
			Hash string `json:"hash"`
		} `json:"header"`
		Chunks []struct {
			ChunkHash string `json:"chunk_hash"`
			ShardID   uint64 `json:"shard_id"`
		} `json:"chunks"`
	}
	if err := json.Unmarshal(env.Result, &block); err != nil {
		t.Fatalf("decode block %d: %v", height, err)
	}
	reqs = append(reqs, request{"block", map[string]any{"block_id": block.Header.Hash}})
	for _, c := range block.Chunks {
		reqs = append(reqs,
			request{"chunk", map[string]any{"block_id": height, "shard_id": c.ShardID}},
			request{"chunk", map[string]any{"block_id": block.Header.Hash, "shard_id": c.ShardID}},
			request{"chunk", map[string]any{"chunk_id": c.ChunkHash}},
		)
	}
	reqs = append(reqs, request{"chunk", map[string]any{"block_id": height, "shard_id": len(block.Chunks) + 7}})
	return reqs
}

// outcome counts answers of one kind of request, and those that differed.
type outcome struct{ results, errors, mismatches int }

// compare sends every request to both nodes and reports each difference in
// result or error (as JSON documents: member order aside). It returns, per
// method (and query request_type / changes_type), how many answers were
// results and how many errors.
func compare(t *testing.T, sim, serve *client, reqs []request) map[string]*outcome {
	t.Helper()
	return compareWith(t, sim, serve, reqs, func(want, got json.RawMessage) bool {
		return canonical(want) == canonical(got)
	})
}

// compareWith is compare with same deciding whether two results (or two
// errors) are equal.
func compareWith(t *testing.T, sim, serve *client, reqs []request, same func(want, got json.RawMessage) bool) map[string]*outcome {
	t.Helper()
	tally := map[string]*outcome{}
	mismatches := 0
	for _, r := range reqs {
		want, err := sim.call(r.method, r.params)
		if err != nil {
			t.Fatalf("sim %s: %v", r, err)
		}
		got, err := serve.call(r.method, r.params)
		if err != nil {
			t.Fatalf("serve %s: %v", r, err)
		}
		kind := r.method
		if p, ok := r.params.(map[string]any); ok {
			for _, k := range []string{"request_type", "changes_type"} {
				if v, ok := p[k].(string); ok {
					kind += "/" + v
				}
			}
		}
		if tally[kind] == nil {
			tally[kind] = &outcome{}
		}
		if want.Result != nil {
			tally[kind].results++
		} else {
			tally[kind].errors++
		}
		if same(want.Result, got.Result) && same(want.Error, got.Error) {
			continue
		}
		mismatches++
		tally[kind].mismatches++
		if mismatches <= 15 {
			t.Errorf("%s:\n sim:   result=%.600s error=%.600s\n serve: result=%.600s error=%.600s",
				r, want.Result, want.Error, got.Result, got.Error)
		}
	}
	if mismatches > 15 {
		t.Errorf("... %d mismatches in all", mismatches)
	}
	return tally
}

// total is the number of requests compared.
func total(tally map[string]*outcome) int {
	n := 0
	for _, o := range tally {
		n += o.results + o.errors
	}
	return n
}

// requireResults fails unless each named kind got at least one result, so
// a comparison of nothing but errors cannot pass.
func requireResults(t *testing.T, tally map[string]*outcome, kinds ...string) {
	t.Helper()
	for _, k := range kinds {
		if o := tally[k]; o == nil || o.results == 0 {
			t.Errorf("no successful %s among the compared requests", k)
		}
	}
}

// TestSkeletonBlocksAndChunks is the end-to-end check of blocks and chunks: sim → index
// --to → serve, then every height's block and chunk requests answered the
// same by both, including the errors for heights with no block.
func TestSkeletonBlocksAndChunks(t *testing.T) {
	const maxHeight = 300
	dbURL := freshDatabase(t)

	simAddr := start(t, "sim", "--listen", anyPort, "--seed", "7", "--shards", "4",
		"--block-time", "0", "--max-height", strconv.Itoa(maxHeight)).listenAddr(t, "simulator listening")
	sim := newClient(simAddr)
	sim.waitReady(t, 30*time.Second)
	// The last few heights may be skipped by the chain.
	shape := readShape(t, sim, maxHeight-20)

	if out, err := runToEnd(t, 3*time.Minute, "index", "--database-url", dbURL,
		"--upstream", "http://"+simAddr, "--to", strconv.FormatUint(shape.head, 10)); err != nil {
		t.Fatalf("nearline index: %v\n%s", err, tail(out, 40))
	}

	serveAddr := start(t, "serve", "--database-url", dbURL, "--listen", anyPort).listenAddr(t, "serving JSON-RPC")
	serve := newClient(serveAddr)
	serve.waitReady(t, 30*time.Second)

	var reqs []request
	for h := shape.genesisHeight; h <= shape.head+3; h++ {
		reqs = append(reqs, blockRequests(t, sim, h)...)
	}
	reqs = append(reqs,
		request{"block", map[string]any{"block_id": "11111111111111111111111111111111"}},
		request{"chunk", map[string]any{"chunk_id": "11111111111111111111111111111111"}},
		request{"block", map[string]any{"finality": "final"}},
		request{"block", map[string]any{"block_id": -1}},
		request{"block", map[string]any{"block_id": 1, "finality": "final"}},
		request{"chunk", map[string]any{}},
		request{"no_such_method", map[string]any{}},
	)
	tally := compare(t, sim, serve, reqs)
	t.Logf("compared %d requests over heights %d..%d", total(tally), shape.genesisHeight, shape.head+3)
	requireResults(t, tally, "block", "chunk")
}
