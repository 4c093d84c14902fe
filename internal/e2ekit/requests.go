package e2ekit

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/upstream"
	"github.com/nearline/nearline/verify"
	"github.com/nearline/nearline/verify/verifytest"
)

// ChainShape is what the differential test reads off the simulator to
// build its requests.
type ChainShape struct {
	GenesisHeight uint64
	Head          uint64
}

// ReadShape waits for sim's final head to reach minHead and settle, and
// reads its genesis height.
func ReadShape(t testing.TB, sim *Client, minHead uint64) ChainShape {
	t.Helper()
	head := WaitHead(t, sim, minHead, 60*time.Second)
	env, err := sim.Call("genesis_config", nil)
	if err != nil || env.Result == nil {
		t.Fatalf("genesis_config from sim: %v %s", err, env.Error)
	}
	var genesis struct {
		GenesisHeight uint64 `json:"genesis_height"`
	}
	if err := json.Unmarshal(env.Result, &genesis); err != nil {
		t.Fatalf("decode genesis_config: %v", err)
	}
	return ChainShape{GenesisHeight: genesis.GenesisHeight, Head: head}
}

// WaitHead polls the final block until its height has reached minHead and
// stayed put for a few polls, and returns that height.
func WaitHead(t testing.TB, c *Client, minHead uint64, timeout time.Duration) uint64 {
	t.Helper()
	var (
		last, stable int
		env          Envelope
		err          error
	)
	settled := wait.Until(timeout, func() bool {
		env, err = c.Call("block", map[string]any{"finality": "final"})
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
		t.Fatalf("%s: final head did not reach %d and settle within %s (at %d; %v %s)", c.URL, minHead, timeout, last, err, env.Error)
	}
	return uint64(last)
}

// BlockRequests lists the block and chunk requests for one height: by
// height, by hash, every shard by (block_id, shard_id) and by chunk_id, a
// shard that does not exist, and an unknown chunk hash.
func BlockRequests(t testing.TB, sim *Client, height uint64) []Request {
	t.Helper()
	reqs := []Request{
		{"block", map[string]any{"block_id": height}},
		{"chunk", map[string]any{"block_id": height, "shard_id": 0}},
	}
	env, err := sim.Call("block", map[string]any{"block_id": height})
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
	reqs = append(reqs, Request{"block", map[string]any{"block_id": block.Header.Hash}})
	for _, c := range block.Chunks {
		reqs = append(reqs,
			Request{"chunk", map[string]any{"block_id": height, "shard_id": c.ShardID}},
			Request{"chunk", map[string]any{"block_id": block.Header.Hash, "shard_id": c.ShardID}},
			Request{"chunk", map[string]any{"chunk_id": c.ChunkHash}},
		)
	}
	reqs = append(reqs, Request{"chunk", map[string]any{"block_id": height, "shard_id": len(block.Chunks) + 7}})
	return reqs
}

// GenesisState reads the accounts, keys and contracts of a genesis file.
type GenesisState struct {
	Accounts  []string
	Keys      map[string][]string // account → public keys
	Contracts map[string]string   // account → code hash
}

func ReadGenesis(t testing.TB, path string) GenesisState {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read genesis: %v", err)
	}
	var g near.GenesisFile
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("decode genesis: %v", err)
	}
	s := GenesisState{Keys: map[string][]string{}, Contracts: map[string]string{}}
	for _, r := range g.Records {
		switch {
		case r.Account != nil:
			s.Accounts = append(s.Accounts, r.Account.AccountID)
		case r.AccessKey != nil:
			s.Keys[r.AccessKey.AccountID] = append(s.Keys[r.AccessKey.AccountID], r.AccessKey.PublicKey)
		case r.Contract != nil:
			s.Contracts[r.Contract.AccountID] = near.HashOf(r.Contract.Code).String()
		}
	}
	sort.Strings(s.Accounts)
	return s
}

// LogTally logs how many results and errors each kind of request got.
func LogTally(t testing.TB, tally map[string]*Outcome) {
	t.Helper()
	kinds := make([]string, 0, len(tally))
	for k := range tally {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("%-45s results %5d  errors %5d  mismatches %5d", k, tally[k].Results, tally[k].Errors, tally[k].Mismatches)
	}
}

// SampleRequests are the binary-level differential tests' requests: a
// seeded sample of verify's plan (verifytest.Sample) over the heights
// shape spans, drawn from the simulator at sim: every method, param form
// and error kind at least once, at the heights drawn and past the head.
// The in-process tests (archive/) ask every request at every height.
func SampleRequests(t testing.TB, sim *Client, shape ChainShape, heights int, seed uint64) []Request {
	t.Helper()
	source, err := verify.NewNode(upstream.Config{Endpoints: []string{sim.URL}})
	if err != nil {
		t.Fatalf("verify node of the simulator: %v", err)
	}
	return FromPlan(verifytest.Plan(t, source, shape.GenesisHeight, shape.Head, verifytest.Sample(t, heights, seed)))
}

// FromPlan turns verify's requests into requests to compare.
func FromPlan(plan []verify.Request) []Request {
	reqs := make([]Request, len(plan))
	for i, r := range plan {
		reqs[i] = Request{Method: r.Method, Params: r.Params}
	}
	return reqs
}

// RequireEveryMethod fails unless every kind of request a plan asks
// (verifytest.AnsweredKinds) got at least one result. The kinds in except
// need none (validators, say, when the servers compared forward nothing).
func RequireEveryMethod(t testing.TB, tally map[string]*Outcome, except ...string) {
	t.Helper()
	kinds := slices.DeleteFunc(verifytest.AnsweredKinds(), func(k string) bool { return slices.Contains(except, k) })
	RequireResults(t, tally, kinds...)
}

// NewChunks returns the chunks new at a height (none for a height without
// a block), as the simulator serves them.
func NewChunks(t testing.TB, sim *Client, height uint64) []near.ChunkView {
	t.Helper()
	env, err := sim.Call("block", map[string]any{"block_id": height})
	if err != nil || env.Result == nil {
		return nil
	}
	var block near.BlockView
	if err := json.Unmarshal(env.Result, &block); err != nil {
		t.Fatalf("decode block %d: %v", height, err)
	}
	var chunks []near.ChunkView
	for _, c := range block.Chunks {
		if c.HeightIncluded != height {
			continue
		}
		env, err := sim.Call("chunk", map[string]any{"chunk_id": c.ChunkHash})
		if err != nil || env.Result == nil {
			t.Fatalf("chunk %s from sim: %v %s", c.ChunkHash, err, env.Error)
		}
		var chunk near.ChunkView
		if err := json.Unmarshal(env.Result, &chunk); err != nil {
			t.Fatalf("decode chunk %s: %v", c.ChunkHash, err)
		}
		chunks = append(chunks, chunk)
	}
	return chunks
}
