package docsource_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/store/storetest"
)

// TestNeardataSourceFetchesAboutOneDocumentPerBlock indexes a simulated
// chain through the RPC source and through neardata, counting the requests
// that reach the simulator: neardata asks each height's document once
// and the final head a few times in all (not once a batch), configs
// aside (they go to the RPC upstream), and both archives must match the
// simulator.
func TestNeardataSourceFetchesAboutOneDocumentPerBlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := sim.Config{Seed: 8, Shards: 4, SkipRate: 0.05, MissingChunkRate: 0.05, TxsPerBlock: 12, EpochLength: 50, ViewStateLimit: -1}
	const maxHeight = 160
	cfg.MaxHeight = maxHeight
	chain := simtest.New(t, cfg)
	docs := &countingHandler{next: chain.Node.Handler()}
	rpcs := &countingHandler{next: chain.Node.Handler()}
	docSrv, rpcSrv := httptest.NewServer(docs), httptest.NewServer(rpcs)
	t.Cleanup(docSrv.Close)
	t.Cleanup(rpcSrv.Close)
	to := uint64(maxHeight)

	viaRPC := storetest.NewStore(t)
	simtest.IndexEndpoints(t, viaRPC, to, nil, rpcSrv.URL)
	rpcCalls := rpcs.count.Load()
	rpcs.count.Store(0)

	neardata, err := docsource.NewNeardataFetcher(fastHTTP(docSrv.URL))
	require.NoError(t, err)
	viaDocs := storetest.NewStore(t)
	src := docSource(t, neardata, rpcClient(t, rpcSrv.URL))
	ix, err := indexer.New(indexer.Config{To: &to, Workers: 6, BatchSize: 25}, src, viaDocs, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(ctx))

	heights := float64(maxHeight + 1)
	perBlock := float64(docs.count.Load()) / heights
	t.Logf("requests per height over %d heights: rpc %.2f, neardata %.3f (+ %d config calls to the RPC upstream)",
		maxHeight+1, float64(rpcCalls)/heights, perBlock, rpcs.count.Load())
	require.Equal(t, int64(maxHeight+1), docs.count.Load()-docs.head.Load(), "one document request per height")
	require.LessOrEqual(t, docs.head.Load(), int64(3), "final head: at the start and near it, not once per batch")
	epochs := int64(maxHeight/cfg.EpochLength + 1)
	require.Equal(t, 1+epochs, rpcs.count.Load(), "configs: genesis once, protocol config once per epoch")
	simtest.Check(t, chain.Node, viaDocs, 0, maxHeight)
	simtest.Check(t, chain.Node, viaRPC, 0, maxHeight)
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
	newSource := func() *docsource.DocSource {
		lake, err := docsource.NewLakeFetcher(chain.URL+"/lake", fastHTTP(), rpcClient(t, chain.URL))
		require.NoError(t, err)
		src, err := docsource.NewDocSource(lake, rpcClient(t, chain.URL), docsource.DocConfig{Waits: rpcsource.Waits{TxStallWait: 50 * time.Millisecond, TxPollInterval: 10 * time.Millisecond}})
		require.NoError(t, err)
		return src
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
			got, err := s.TxStatus(ctx, ref.TxHash, ref.SignerID)
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
		var docs docsource.DocFetcher
		var err error
		if strings.HasPrefix(c.name, "lake") {
			docs, err = docsource.NewLakeFetcher(strings.Join(c.endpoints, ","), http, rpc)
		} else {
			docs, err = docsource.NewNeardataFetcher(http)
		}
		require.NoError(t, err)
		s := storetest.NewStore(t)
		to := uint64(maxHeight)
		// Faults and stalls slow the documents a status is read from: a
		// stall wait far above them, so that no status is stored before
		// its documents arrive (at 200 ms it was, on a loaded machine).
		src, err := docsource.NewDocSource(docs, rpc, docsource.DocConfig{Waits: rpcsource.Waits{TxStallWait: 10 * time.Second, TxPollInterval: 20 * time.Millisecond}})
		require.NoError(t, err)
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
	neardata, err := docsource.NewNeardataFetcher(fastHTTP(chain.URL))
	require.NoError(t, err)
	src, err := docsource.NewDocSource(neardata, rpcClient(t, chain.URL), docsource.DocConfig{Waits: rpcsource.Waits{TxPollInterval: 10 * time.Millisecond}})
	require.NoError(t, err)
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
