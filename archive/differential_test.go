package archive_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/internal/rpctest"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/verify"
	"github.com/nearline/nearline/verify/verifytest"
)

// TestArchiveMatchesSimulator indexes a simulated chain into a fresh archive
// and asks both the same questions through the same protocol layer: every
// answer (result or error) must be byte-identical.
func TestArchiveMatchesSimulator(t *testing.T) {
	t.Parallel()
	outcomes, _ := compareWithSimulator(t, sim.Config{Seed: 11, Shards: 3, TxsPerBlock: 6, SkipRate: 0.1, MissingChunkRate: 0.1, MaxHeight: 40}, extra{})
	requireOutcomes(t, outcomes, verifytest.AnsweredKinds(),
		"EXPERIMENTAL_congestion_level UNKNOWN_CHUNK", "EXPERIMENTAL_congestion_level INVALID_SHARD_ID",
		"EXPERIMENTAL_congestion_level UNKNOWN_BLOCK", congestedOutcome)
	t.Logf("%d of %d congestion levels are not zero", outcomes[congestedOutcome], outcomes["EXPERIMENTAL_congestion_level ok"])
}

// requireOutcomes fails unless the comparison covered real answers, not
// only errors: a result ("<kind> ok") of every kind of request in kinds,
// and at least one of each outcome in more.
func requireOutcomes(t *testing.T, outcomes map[string]int, kinds []string, more ...string) {
	t.Helper()
	for _, kind := range kinds {
		require.Positive(t, outcomes[kind+" ok"], "no result of %s among %v", kind, outcomes)
	}
	for _, outcome := range more {
		require.Positive(t, outcomes[outcome], "no %q among %v", outcome, outcomes)
	}
}

// congestedOutcome counts, among compareWithSimulator's outcomes, the
// congestion levels above zero.
const congestedOutcome = "congestion level above 0"

// extra is what a differential test asks and counts beyond the plan.
type extra struct {
	// requests are asked after the plan's.
	requests []verify.Request
	// carrying are counted in the simulator's answers, as the outcome
	// "carrying <s>": a comparison that must cover something can count it.
	carrying []string
}

// compareWithSimulator indexes the chain cfg describes (up to
// cfg.MaxHeight) into a fresh archive and asks both the same questions
// through the same protocol layer: every request of verify's plan at every
// height (verifytest.Every), then more's. Every answer (result or error)
// must be byte-identical. It returns how many answers of each outcome it
// compared, and the chain, for a test to look into further.
func compareWithSimulator(t *testing.T, cfg sim.Config, more extra) (map[string]int, *simtest.Chain) {
	t.Helper()
	ctx := context.Background()
	began := time.Now()
	chain, st := simtest.Indexed(t, cfg)
	indexed := time.Since(began)
	vm, err := nearvm.New(ctx, nearvm.Config{}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = vm.Close(context.Background()) })
	// The simulator answers as its HTTP handler does: what the indexer read.
	simH := chain.Node.Handler()
	// What the archive does not hold goes upstream, as with `serve
	// --upstream`: a hash the chain never had, validators (not archived),
	// or a receipt_to_tx the archive cannot answer (a receipt whose
	// transaction had not finished when the indexer stopped, or that has
	// no outcome at all, as a global contract distribution); anything else
	// forwarded fails the test.
	var forwarded sync.Map
	forward := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &req)
		forwarded.Store(string(body), req.Method)
		simH.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
	}))
	t.Cleanup(forward.Close)
	archiveH := archiveHandler(t, st, vm, forward.URL)

	source, err := verify.NewArchive(chain.Node, rpcserve.Config{}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, source.Close(context.Background())) })
	began = time.Now()
	reqs := append(verifytest.Plan(t, source, chain.Node.Genesis().GenesisHeight, chain.Head, verifytest.Every(t)), more.requests...)
	planned := time.Since(began)
	began = time.Now()
	// Asked four at a time (the archive's answers wait on the database),
	// and compared as they come: kept, a plan's answers would hold a
	// gigabyte of contract code.
	compared := make([]comparison, len(reqs))
	var g errgroup.Group
	g.SetLimit(4)
	for i, r := range reqs {
		g.Go(func() error {
			body := string(r.Body())
			want, err := answer(simH, body)
			if err != nil {
				return fmt.Errorf("simulator: %w", err)
			}
			got, err := answer(archiveH, body)
			if err != nil {
				return fmt.Errorf("archive: %w", err)
			}
			compared[i] = compare(r, want, got, more.carrying)
			return nil
		})
	}
	require.NoError(t, g.Wait())
	mismatches := 0
	outcomes := map[string]int{}
	for i, r := range reqs {
		c := compared[i]
		outcomes[c.outcome]++
		if c.congested {
			outcomes[congestedOutcome]++
		}
		for j, s := range more.carrying {
			if c.carrying[j] {
				outcomes["carrying "+s]++
			}
		}
		if c.diff != "" {
			mismatches++
			if mismatches <= 20 {
				t.Errorf("%s: %s", r, c.diff)
			}
		}
	}
	nForwarded := 0
	forwarded.Range(func(body, method any) bool {
		nForwarded++
		unknown := strings.Contains(body.(string), verify.UnknownHash)
		require.True(t, method == "EXPERIMENTAL_receipt_to_tx" || method == "validators" || unknown, "forwarded: %s", body)
		return true
	})
	t.Logf("indexed in %s, planned in %s, compared %d requests over heights 0..%d in %s: %d mismatches, %d forwarded; outcomes %v",
		indexed.Round(time.Millisecond), planned.Round(time.Millisecond), len(reqs), chain.Head, time.Since(began).Round(time.Millisecond),
		mismatches, nForwarded, outcomes)
	require.Zero(t, mismatches)
	require.LessOrEqual(t, nForwarded*100, len(reqs), "more than 1%% of the requests went upstream")
	return outcomes, chain
}

// comparison is what compareWithSimulator keeps of a request's two
// answers: what it counts and reports, not the answers.
type comparison struct {
	outcome   string // outcomeOf the simulator's answer
	congested bool   // isCongested of the simulator's answer
	carrying  []bool // whether the simulator's answer holds each of extra.carrying
	diff      string // where the answers differ, or "" when they are the same bytes
}

// compare compares the simulator's answer to r, want, with the archive's,
// got, counting in want each of carrying.
func compare(r verify.Request, want, got []byte, carrying []string) comparison {
	c := comparison{outcome: outcomeOf(r, want), congested: isCongested(r, want), carrying: make([]bool, len(carrying))}
	for i, s := range carrying {
		c.carrying[i] = bytes.Contains(want, []byte(s))
	}
	if !bytes.Equal(want, got) {
		at := firstDifference(want, got)
		c.diff = fmt.Sprintf("answers differ at byte %d\n sim:     …%.400s\n archive: …%.400s", at, want[max(0, at-100):], got[max(0, at-100):])
	}
	return c
}

// firstDifference is the offset of the first byte where a and b differ.
func firstDifference(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// isCongested reports whether resp is a congestion level result above 0.
func isCongested(r verify.Request, resp []byte) bool {
	if r.Method != "EXPERIMENTAL_congestion_level" {
		return false
	}
	var env struct {
		Result struct {
			CongestionLevel *float64 `json:"congestion_level"`
		} `json:"result"`
	}
	return json.Unmarshal(resp, &env) == nil && env.Result.CongestionLevel != nil && *env.Result.CongestionLevel > 0
}

// resultPrefix opens every result envelope the protocol layer encodes
// (near.Response's members in order): what follows is the result.
const resultPrefix = `{"jsonrpc":"2.0","result":`

// outcomeOf names a response for the summary: "<kind> ok" or "<kind>
// <CAUSE>", the kind being the method with a query's request type or a
// changes request's changes type (verify.Request.Kind). A result is told
// by its envelope's start, so that a large one (a contract's code) is not
// decoded again.
func outcomeOf(r verify.Request, resp []byte) string {
	name := r.Kind
	if bytes.HasPrefix(resp, []byte(resultPrefix)) {
		if r.Method == "query" && bytes.Contains(resp, []byte(`"error":`)) {
			return name + " legacy-error"
		}
		return name + " ok"
	}
	var env near.Response
	if err := json.Unmarshal(resp, &env); err != nil || env.Error == nil {
		return name + " not a JSON-RPC answer"
	}
	return name + " " + env.Error.CauseName()
}

func post(t *testing.T, h http.Handler, body string) []byte {
	t.Helper()
	out, err := answer(h, body)
	require.NoError(t, err)
	return out
}

// answer is h's response to body, which must come with HTTP 200.
func answer(h http.Handler, body string) ([]byte, error) {
	rec := rpctest.Serve(h, body)
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d for %s", rec.Code, body)
	}
	return rec.Body.Bytes(), nil
}

func sortedKeys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}
