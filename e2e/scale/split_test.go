//go:build e2e

package scale

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
)

// indexRange starts `nearline index --cursor cursor --from from --to to`.
func indexRange(t *testing.T, dbURL, upstream, cursor string, from, to uint64, args ...string) *e2ekit.Process {
	t.Helper()
	return binary.Start(t, append([]string{"index", "--database-url", dbURL, "--upstream", upstream, "--cursor", cursor,
		"--from", strconv.FormatUint(from, 10), "--to", strconv.FormatUint(to, 10), "--progress-interval", "1h"}, args...)...)
}

// waitExit0 fails the test unless each process exits 0 within timeout.
func waitExit0(t *testing.T, timeout time.Duration, ps ...*e2ekit.Process) {
	t.Helper()
	for _, p := range ps {
		err, exited := p.WaitExit(timeout)
		if !exited || err != nil {
			t.Fatalf("nearline index: exited %v, %v\n%s", exited, err, e2ekit.Tail(p.Output(), 40))
		}
	}
}

// errorData is the data of a JSON-RPC error answer.
func errorData(t *testing.T, c *e2ekit.Client, method string, params any) string {
	t.Helper()
	env, err := c.Call(method, params)
	if err != nil || env.Error == nil {
		t.Fatalf("%s %v: want an error, got %v %s", method, params, err, env.Result)
	}
	var e struct {
		Data  string `json:"data"`
		Cause struct {
			Name string `json:"name"`
		} `json:"cause"`
	}
	if err := json.Unmarshal(env.Error, &e); err != nil {
		t.Fatalf("decode error %s: %v", env.Error, err)
	}
	return e.Cause.Name + ": " + e.Data
}

// TestSplitBackfillAnswersAsOneIndexer indexes one simulated chain twice:
// with one `nearline index`, and with three on their own cursors and
// thirds of the heights, the top and bottom thirds at once and the middle
// one after. While the middle third is missing, `nearline status` lists
// the ranges and the heights between them, `serve` answers a block of
// either range, a height between them is UNKNOWN_BLOCK naming the heights
// not indexed, and state at the top range is refused naming them. Once
// the middle range is in, status shows one run with no heights missing,
// and every request of the differential tests (every method at every
// height, malformed ones too; neither server forwards) is answered byte
// for byte as by the archive one indexer filled.
func TestSplitBackfillAnswersAsOneIndexer(t *testing.T) {
	t.Parallel()
	const maxHeight = 200
	genesisPath := filepath.Join(t.TempDir(), "genesis.json")
	simAddr, sim := binary.Sim(t, "--seed", "9", "--shards", "4", "--block-time", "0", "--skip-rate", "0.08",
		"--max-height", strconv.Itoa(maxHeight), "--genesis-out", genesisPath, "--protocol-version", "77", "--yield-timeout", "20")
	shape := e2ekit.ReadShape(t, sim, maxHeight-20)
	genesis := e2ekit.ReadGenesis(t, genesisPath)
	upstream := "http://" + simAddr
	to := shape.Head

	one := e2ekit.FreshDatabase(t)
	binary.Index(t, 5*time.Minute, one, upstream, to, "--genesis", genesisPath)

	split := e2ekit.FreshDatabase(t)
	third := (to - shape.GenesisHeight) / 3
	b, c := shape.GenesisHeight+third, shape.GenesisHeight+2*third
	waitExit0(t, 5*time.Minute,
		indexRange(t, split, upstream, "part-c", c, to),
		indexRange(t, split, upstream, "part-a", shape.GenesisHeight, b-1, "--genesis", genesisPath))

	out, err := binary.Run(t, time.Minute, "status", "--database-url", split)
	if err != nil {
		t.Fatalf("nearline status: %v\n%s", err, out)
	}
	t.Logf("nearline status with the middle third missing:\n%s", out)
	for _, want := range []string{"range part-a:", "range part-c:", fmt.Sprintf("not indexed:     %d-%d", b, c-1)} {
		if !strings.Contains(out, want) {
			t.Errorf("nearline status: no %q in\n%s", want, out)
		}
	}
	_, _, partial := binary.Serve(t, split)
	for _, h := range []uint64{b - 1, c, to} {
		if env, err := partial.Call("block", map[string]any{"block_id": h}); err != nil || (env.Error != nil && !strings.Contains(string(env.Error), "UNKNOWN_BLOCK")) {
			t.Errorf("block %d of a range: %v %s", h, err, env.Error)
		}
	}
	gap := "which this archive has not indexed yet"
	if got := errorData(t, partial, "block", map[string]any{"block_id": b + 1}); !strings.Contains(got, "UNKNOWN_BLOCK: Block #") || !strings.Contains(got, gap) {
		t.Errorf("block %d between the ranges: %s", b+1, got)
	}
	notDecided := fmt.Sprintf("heights #%d-#%d below it are not indexed", b, c-1)
	if got := errorData(t, partial, "query", map[string]any{"request_type": "view_account", "account_id": genesis.Accounts[0], "finality": "final"}); !strings.Contains(got, notDecided) {
		t.Errorf("view_account at the top range: %s; want %q", got, notDecided)
	}

	waitExit0(t, 5*time.Minute, indexRange(t, split, upstream, "part-b", b, to))
	out, err = binary.Run(t, time.Minute, "status", "--database-url", split)
	if err != nil {
		t.Fatalf("nearline status: %v\n%s", err, out)
	}
	t.Logf("nearline status after the middle third:\n%s", out)
	if !strings.Contains(out, "range part-b:") || strings.Contains(out, "not indexed:") || strings.Contains(out, "gaps:") {
		t.Errorf("nearline status after the middle third: want three ranges and nothing missing\n%s", out)
	}

	// Neither forwards: what the split archive could not answer itself
	// must show, not be filled in by the upstream.
	_, _, onOne := binary.Serve(t, one)
	_, _, onSplit := binary.Serve(t, split)
	reqs, congested := e2ekit.EveryMethodRequests(t, sim, shape, genesis)
	for h := shape.GenesisHeight; h <= to+3; h++ {
		reqs = append(reqs, e2ekit.BlockRequests(t, sim, h)...)
	}
	tally := e2ekit.CompareWith(t, onOne, onSplit, reqs, sameBytes)
	e2ekit.LogTally(t, tally)
	t.Logf("compared %d requests byte for byte over heights %d..%d", e2ekit.Total(tally), shape.GenesisHeight, to+3)
	e2ekit.RequireEveryMethod(t, tally, congested, "validators")
	e2ekit.RequireResults(t, tally, "block", "chunk")
}
