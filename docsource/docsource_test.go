package docsource_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/store/storetest"
	"github.com/nearline/nearline/upstream"
)

// fastHTTP is a client config for tests: quick retries.
func fastHTTP(endpoints ...string) upstream.Config {
	return upstream.Config{Endpoints: endpoints, Timeout: 2 * time.Second,
		BaseBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxAttempts: 20}
}

func rpcClient(t *testing.T, endpoints ...string) *upstream.Client {
	t.Helper()
	client, err := upstream.NewClient(fastHTTP(endpoints...), nil)
	require.NoError(t, err)
	return client
}

// testWaits are the tx waits of the sources the tests compare: short, for
// a simulated chain that is all produced.
var testWaits = upstream.Waits{TxStallWait: 200 * time.Millisecond, TxPollInterval: 20 * time.Millisecond}

// docSource returns a docsource.Source over docs and rpc with the given tx waits,
// failing the test on a configuration error.
func docSource(t *testing.T, docs docsource.Fetcher, rpc upstream.RPC, waits upstream.Waits) *docsource.Source {
	t.Helper()
	src, err := docsource.New(docs, rpc, docsource.Config{Waits: waits}, nil)
	require.NoError(t, err)
	return src
}

var _ indexer.Source = (*docsource.Source)(nil)

// chainSources returns the RPC source of a served simulated chain (what
// the document sources must build) and its three document sources by name:
// neardata, lake over HTTP and lake from a directory written with heights
// up to maxHeight (no head RPC: it reads the layout off the folder).
func chainSources(t *testing.T, chain *simtest.Chain, maxHeight uint64) (*rpcsource.Source, map[string]indexer.Source) {
	t.Helper()
	rpc := rpcClient(t, chain.URL)
	neardata, err := docsource.NewNeardataFetcher(fastHTTP(chain.URL), nil)
	require.NoError(t, err)
	lakeHTTP, err := docsource.NewLakeFetcher(fastHTTP(chain.URL+"/lake"), rpc, nil)
	require.NoError(t, err)
	lakeDir, err := docsource.NewLakeFetcher(upstream.Config{Endpoints: []string{writeLake(t, chain.URL, 0, maxHeight)}}, nil, nil)
	require.NoError(t, err)
	return simtest.NodeSource(t, rpc, rpcsource.Config{Waits: testWaits}), map[string]indexer.Source{
		"neardata":  docSource(t, neardata, rpc, testWaits),
		"lake http": docSource(t, lakeHTTP, rpc, testWaits),
		"lake dir":  docSource(t, lakeDir, rpc, testWaits),
	}
}

// requireSameBundles requires each of sources to build want's Bundle of
// height h, or to have no block there either; it returns want's Bundle,
// nil where the chain has no block at h.
func requireSameBundles(t *testing.T, want indexer.Source, sources map[string]indexer.Source, h uint64) *bundle.Bundle {
	t.Helper()
	ctx := context.Background()
	w, werr := want.Bundle(ctx, h)
	if werr != nil {
		require.ErrorIs(t, werr, bundle.ErrNoBlock)
	}
	for name, src := range sources {
		got, err := src.Bundle(ctx, h)
		if werr != nil {
			require.ErrorIs(t, err, bundle.ErrNoBlock, "%s at %d", name, h)
			continue
		}
		require.NoError(t, err, "%s at %d", name, h)
		requireSameBundle(t, w, got, name)
	}
	if werr != nil {
		return nil
	}
	return w
}

// requireSameBundle compares two bundles member by member, the JSON of
// each answer byte for byte.
func requireSameBundle(t *testing.T, want, got *bundle.Bundle, what string) {
	t.Helper()
	h := want.Height()
	require.Equal(t, string(want.BlockJSON), string(got.BlockJSON), "%s: block %d", what, h)
	require.Equal(t, want.Block, got.Block, "%s: block view %d", what, h)
	requireSameParts(t, what, "chunk", h, want.Chunks, got.Chunks, func(c bundle.Chunk) (json.RawMessage, any) { return c.JSON, c.View })
	requireSameParts(t, what, "older chunk", h, want.OlderChunks, got.OlderChunks, func(c bundle.Chunk) (json.RawMessage, any) { return c.JSON, nil })
	require.Equal(t, want.Effects, got.Effects, "%s: effects of %d", what, h)
	requireSameParts(t, what, "change", h, want.Changes, got.Changes, func(c bundle.StateChange) (json.RawMessage, any) { return c.JSON, c.View })
	require.Equal(t, len(want.TxStatuses), len(got.TxStatuses), "%s: tx statuses of %d", what, h)
	for i := range want.TxStatuses {
		w, g := want.TxStatuses[i], got.TxStatuses[i]
		require.Equal(t, w.TxHash, g.TxHash, "%s: tx %d of %d", what, i, h)
		require.Equal(t, w.SignerID, g.SignerID, "%s: tx %s", what, w.TxHash)
		require.Equal(t, string(w.JSON), string(g.JSON), "%s: status of tx %s", what, w.TxHash)
		require.Equal(t, w.BlockHeights, g.BlockHeights, "%s: outcome heights of tx %s", what, w.TxHash)
	}
	require.Equal(t, want.ProtocolConfig, got.ProtocolConfig, "%s: protocol config at %d", what, h)
	require.Equal(t, want.ShardIDs, got.ShardIDs, "%s: shard ids at %d", what, h)
}

// requireSameParts compares one list of a bundle's answers, each named
// noun: as many in got as in want, the JSON of each byte for byte and its
// decoded view (parts returns a nil view where only the JSON is compared).
func requireSameParts[P any](t *testing.T, what, noun string, h uint64, want, got []P, parts func(P) (json.RawMessage, any)) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s: %ss of %d", what, noun, h)
	for i := range want {
		wantJSON, wantView := parts(want[i])
		gotJSON, gotView := parts(got[i])
		require.Equal(t, string(wantJSON), string(gotJSON), "%s: %s %d of %d", what, noun, i, h)
		require.Equal(t, wantView, gotView, "%s: %s view %d of %d", what, noun, i, h)
	}
}

// writeLake writes the simulator's lake objects for heights lo..hi into a
// directory: block.json and the shard file of every shard of the block's
// layout (the shard ids its neardata document lists).
func writeLake(t *testing.T, base string, lo, hi uint64) string {
	t.Helper()
	dir := t.TempDir()
	get := func(name string) ([]byte, bool) {
		resp, err := http.Get(base + name)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return body, resp.StatusCode == http.StatusOK
	}
	for h := lo; h <= hi; h++ {
		folder := fmt.Sprintf("%012d", h)
		block, ok := get("/lake/" + folder + "/block.json")
		if !ok {
			continue // skipped: no folder
		}
		require.NoError(t, os.MkdirAll(filepath.Join(dir, folder), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, folder, "block.json"), block, 0o644))
		raw, ok := get(fmt.Sprintf("/v0/block/%d", h))
		require.True(t, ok, "document of %d", h)
		var doc struct {
			Shards []struct {
				ShardID uint64 `json:"shard_id"`
			} `json:"shards"`
		}
		require.NoError(t, json.Unmarshal(raw, &doc))
		for _, sh := range doc.Shards {
			name := fmt.Sprintf("shard_%d.json", sh.ShardID)
			body, ok := get("/lake/" + folder + "/" + name)
			require.True(t, ok, "shard %d of %d", sh.ShardID, h)
			require.NoError(t, os.WriteFile(filepath.Join(dir, folder, name), body, 0o644))
		}
	}
	return dir
}

// TestDocumentSourcesBuildTheRPCSourcesBundles fetches every height of a
// simulated chain through the RPC source and the three document sources
// (neardata, lake over HTTP, lake from a directory) and requires the same
// Bundle from each.
func TestDocumentSourcesBuildTheRPCSourcesBundles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const maxHeight = 90
	chain := simtest.New(t, sim.Config{Seed: 21, Shards: 4, SkipRate: 0.1, MissingChunkRate: 0.1, TxsPerBlock: 6, EpochLength: 30,
		ViewStateLimit: -1, MaxHeight: maxHeight})
	rpc, sources := chainSources(t, chain, maxHeight)
	// Start above genesis at a block with a missing chunk: the chunk it
	// repeats comes from an earlier document (Bundle.OlderChunks).
	from := uint64(20)
	for ; ; from++ {
		raw, err := chain.Node.Block(ctx, simtest.BlockRef(t, from))
		if err != nil {
			continue
		}
		var b near.BlockView
		require.NoError(t, json.Unmarshal(raw, &b))
		if slices.Contains(b.Header.ChunkMask, false) {
			break
		}
	}
	for _, src := range append(slices.Collect(maps.Values(sources)), rpc) {
		src.Prepare(from)
		head, err := src.FinalHead(ctx)
		require.NoError(t, err)
		require.Equal(t, uint64(maxHeight), head)
	}
	var blocks, skipped, txs, final, older int
	for h := from; h <= maxHeight; h++ {
		want := requireSameBundles(t, rpc, sources, h)
		if want == nil {
			skipped++
			continue
		}
		blocks++
		older += len(want.OlderChunks)
		for _, st := range want.TxStatuses {
			txs++
			if strings.Contains(string(st.JSON), `"final_execution_status":"FINAL"`) {
				final++
			}
		}
	}
	t.Logf("%d blocks, %d skipped heights, %d older chunks, %d tx statuses (%d FINAL) identical from 4 sources", blocks, skipped, older, txs, final)
	require.Positive(t, skipped)
	require.Positive(t, older)
	require.Greater(t, txs, 200)
	require.Less(t, final, txs, "the last blocks' transactions are not final")

	// A revisit assembles the status again from the documents.
	for _, src := range []string{"neardata", "lake dir"} {
		st, isFinal, err := sources[src].TxStatus(ctx, bundle.TxRef{TxHash: "nope", SignerID: "x", Height: 30})
		var ne *near.Error
		require.True(t, errors.As(err, &ne), "%s: %v", src, err)
		require.False(t, isFinal)
		require.Empty(t, st.JSON)
	}
}

// countingHandler counts the requests that reach next, and apart the
// final-head requests among them. With a key, it answers 401 to a request
// without ?apiKey=key, and with a bearer, to one without Authorization:
// Bearer <bearer> (counted in refused), as FastNEAR does. It counts the
// requests that carried an Authorization header in authorized, refused or
// not.
type countingHandler struct {
	next                             http.Handler
	key, bearer                      string
	count, head, refused, authorized atomic.Int64
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	if auth != "" {
		c.authorized.Add(1)
	}
	if (c.key != "" && r.URL.Query().Get("apiKey") != c.key) || (c.bearer != "" && auth != "Bearer "+c.bearer) {
		c.refused.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	c.count.Add(1)
	if strings.HasSuffix(r.URL.Path, "/last_block/final") {
		c.head.Add(1)
	}
	c.next.ServeHTTP(w, r)
}

// TestNeardataSourceFetchesAboutOneDocumentPerBlock indexes a simulated
// chain through the RPC source and through neardata, counting the requests
// that reach the simulator: neardata asks each height's document once
// and the final head a few times in all (not once a batch), configs
// aside (they go to the RPC upstream), and both archives must match the
// simulator. The neardata upstream wants an API key, given in both of
// FastNEAR's forms: in the URL (?apiKey=), which its
// requests must keep, and as the header Authorization: Bearer, which they
// must carry; the RPC upstream, which needs none, gets no such header.
func TestNeardataSourceFetchesAboutOneDocumentPerBlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := sim.Config{Seed: 8, Shards: 4, SkipRate: 0.05, MissingChunkRate: 0.05, TxsPerBlock: 12, EpochLength: 50, ViewStateLimit: -1}
	const maxHeight = 160
	cfg.MaxHeight = maxHeight
	chain := simtest.New(t, cfg)
	const key = "doc-K3Y"
	rpcs := &countingHandler{next: chain.Node.Handler()}
	rpcSrv := httptest.NewServer(rpcs)
	t.Cleanup(rpcSrv.Close)
	to := uint64(maxHeight)

	viaRPC := storetest.NewStore(t)
	simtest.IndexEndpoints(t, viaRPC, to, nil, rpcSrv.URL)
	rpcCalls := rpcs.count.Load()
	simtest.Check(t, chain.Node, viaRPC, 0, maxHeight)

	for _, form := range []string{"query", "header"} {
		rpcs.count.Store(0)
		docs := &countingHandler{next: chain.Node.Handler()}
		docSrv := httptest.NewServer(docs)
		t.Cleanup(docSrv.Close)
		httpCfg := fastHTTP(docSrv.URL + "?apiKey=" + key)
		docs.key = key
		if form == "header" {
			httpCfg = fastHTTP(docSrv.URL)
			httpCfg.BearerToken = key
			docs.key, docs.bearer = "", key
		}
		// No attempt may time out: a loaded machine would retry one and
		// count a document twice. Any failed attempt is counted and shown.
		httpCfg.Timeout = time.Minute
		var failed atomic.Int64
		httpCfg.OnError = func(string) { failed.Add(1) }
		neardata, err := docsource.NewNeardataFetcher(httpCfg, nil)
		require.NoError(t, err)
		viaDocs := storetest.NewStore(t)
		src := docSource(t, neardata, rpcClient(t, rpcSrv.URL), testWaits)
		ix, err := indexer.New(indexer.Config{To: &to, Workers: 6, BatchSize: 25}, src, viaDocs, nil)
		require.NoError(t, err)
		require.NoError(t, ix.Run(ctx))

		heights := float64(maxHeight + 1)
		perBlock := float64(docs.count.Load()) / heights
		t.Logf("key as %s: requests per height over %d heights: rpc %.2f, neardata %.3f (+ %d config calls to the RPC upstream)",
			form, maxHeight+1, float64(rpcCalls)/heights, perBlock, rpcs.count.Load())
		require.Zero(t, docs.refused.Load(), "%s: every document request carried the key", form)
		require.Equal(t, int64(maxHeight+1), docs.count.Load()-docs.head.Load(), "%s: one document request per height (%d failed attempts)", form, failed.Load())
		require.LessOrEqual(t, docs.head.Load(), int64(3), "%s: final head: at the start and near it, not once per batch", form)
		epochs := int64(maxHeight/cfg.EpochLength + 1)
		require.Equal(t, 1+epochs, rpcs.count.Load(), "%s: configs: genesis once, protocol config once per epoch", form)
		require.Zero(t, rpcs.authorized.Load(), "%s: the RPC upstream got no Authorization header", form)
		simtest.Check(t, chain.Node, viaDocs, 0, maxHeight)
	}
}

// TestDocumentSourceRevisitsNonFinalStatuses indexes up to a head where
// transactions are still running (their statuses stored as not FINAL),
// then, once the chain moved on, revisits them from later documents: each
// ends as the simulator's EXPERIMENTAL_tx_status, whether the source kept
// what it found of them (same process) or reads them again from their
// block (a restarted one).
func TestDocumentSourceRevisitsNonFinalStatuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := sim.Config{Seed: 21, Shards: 2, SkipRate: 0.05, MissingChunkRate: 0.05, TxsPerBlock: 6, ViewStateLimit: -1, MaxHeight: 90,
		YieldTimeout: 4} // yields end within a few blocks, as the other receipts do
	chain := simtest.Start(t, cfg)
	node := chain.Node
	s := storetest.NewStore(t)
	newSource := func() *docsource.Source {
		lake, err := docsource.NewLakeFetcher(fastHTTP(chain.URL+"/lake"), rpcClient(t, chain.URL), nil)
		require.NoError(t, err)
		return docSource(t, lake, rpcClient(t, chain.URL), upstream.Waits{TxStallWait: 50 * time.Millisecond, TxPollInterval: 10 * time.Millisecond})
	}
	src := newSource()
	run := func(to uint64) []bundle.TxRef {
		require.NoError(t, node.ProduceTo(ctx, to))
		ix, err := indexer.New(indexer.Config{To: &to, RevisitInterval: time.Nanosecond, BatchSize: 5}, src, s, nil)
		require.NoError(t, err)
		require.NoError(t, ix.Run(ctx))
		pending, err := s.PendingTxStatuses(ctx, to, 1000)
		require.NoError(t, err)
		require.NotEmpty(t, pending, "at the simulator's head some transactions are still running")
		for _, ref := range pending {
			got, err := s.TxStatus(ctx, ref.TxHash, ref.SignerID, true)
			require.NoError(t, err)
			require.False(t, strings.Contains(string(got), `"FINAL"`))
		}
		return pending
	}
	pending := run(40)
	later := run(65) // the same source: it continues where it stopped
	simtest.RequireRevisited(t, node, s, pending, 40)
	src = newSource() // restarted: it reads them from their block again
	run(90)
	simtest.RequireRevisited(t, node, s, later, 65)
	simtest.Check(t, node, s, 0, 90)
}

// TestDocumentSourcesThroughFaultyUpstreams indexes through neardata and
// lake endpoints that fail in every way the simulator can (HTTP 5xx,
// JSON-RPC INTERNAL_ERROR bodies, malformed and truncated bodies, stalls,
// 429 with Retry-After), first failing over to a healthy endpoint, then on
// the faulty one alone: the archive matches the simulator either way.
func TestDocumentSourcesThroughFaultyUpstreams(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := sim.Config{Seed: 5, Shards: 3, SkipRate: 0.1, MissingChunkRate: 0.1, TxsPerBlock: 3, ViewStateLimit: -1}
	const maxHeight = 60
	cfg.MaxHeight = maxHeight
	chain := simtest.New(t, cfg)
	faults := sim.FaultConfig{Seed: 3, Fail5xx: 0.1, FailInternal: 0.1, FailMalformed: 0.1, FailTruncated: 0.1,
		Stall: 0.03, StallDuration: 5 * time.Second, RateLimit: 400}
	faulty := httptest.NewServer(chain.Node.HandlerWithFaults(faults))
	t.Cleanup(faulty.Close)
	rpc := rpcClient(t, chain.URL)
	for _, c := range []struct {
		name      string
		endpoints []string
	}{
		{"neardata failing over", []string{faulty.URL, chain.URL}},
		{"neardata alone", []string{faulty.URL}},
		{"lake alone", []string{faulty.URL + "/lake"}},
	} {
		var kinds atomic.Int64
		http := fastHTTP(c.endpoints...)
		http.Timeout = time.Second
		http.MaxAttempts = 40
		http.OnError = func(string) { kinds.Add(1) }
		var docs docsource.Fetcher
		var err error
		if strings.HasPrefix(c.name, "lake") {
			docs, err = docsource.NewLakeFetcher(http, rpc, nil)
		} else {
			docs, err = docsource.NewNeardataFetcher(http, nil)
		}
		require.NoError(t, err)
		s := storetest.NewStore(t)
		to := uint64(maxHeight)
		// Faults and stalls slow the documents a status is read from: a
		// stall wait far above them, so that no status is stored before
		// its documents arrive (at 200 ms it was, on a loaded machine).
		src := docSource(t, docs, rpc, upstream.Waits{TxStallWait: 10 * time.Second, TxPollInterval: 20 * time.Millisecond})
		ix, err := indexer.New(indexer.Config{To: &to, Workers: 6, BatchSize: 20}, src, s, nil)
		require.NoError(t, err)
		require.NoError(t, ix.Run(ctx), c.name)
		simtest.Check(t, chain.Node, s, 0, maxHeight)
		t.Logf("%s: %d failed attempts retried", c.name, kinds.Load())
		require.Positive(t, kinds.Load(), c.name)
	}
}

// TestNeardataFollowsAGrowingChain follows a chain still being produced,
// whose final head trails its tip: statuses wait for their receipts while
// the head moves, and the archive matches the simulator.
func TestNeardataFollowsAGrowingChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := sim.Config{Seed: 13, Shards: 3, SkipRate: 0.1, MissingChunkRate: 0.1, TxsPerBlock: 4, ViewStateLimit: -1,
		BlockTime: 30 * time.Millisecond, MaxHeight: 90, FinalityLag: 2,
		YieldTimeout: 4} // yields end within a few blocks, as the other receipts do
	chain := simtest.Start(t, cfg)
	node := chain.Node
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- node.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })
	neardata, err := docsource.NewNeardataFetcher(fastHTTP(chain.URL), nil)
	require.NoError(t, err)
	src := docSource(t, neardata, rpcClient(t, chain.URL), upstream.Waits{TxPollInterval: 10 * time.Millisecond})
	s := storetest.NewStore(t)
	to := uint64(70)
	ix, err := indexer.New(indexer.Config{To: &to, Workers: 4, BatchSize: 10, PollInterval: 20 * time.Millisecond}, src, s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(ctx))
	require.NoError(t, <-done) // production ends at MaxHeight
	done <- nil
	pending, err := s.PendingTxStatuses(ctx, 60, 1000)
	require.NoError(t, err)
	require.Empty(t, pending, "statuses waited for the head to bring their receipts")
	simtest.Check(t, node, s, 0, 70)
}
