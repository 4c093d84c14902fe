package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/upstream"
)

// fetchCounts is what the indexer asked the upstream for.
type fetchCounts struct {
	requests atomic.Int64
	bytes    atomic.Int64
	inFlight atomic.Int64
	maxIn    atomic.Int64
	nanos    atomic.Int64 // sum of call durations
	// Of the document requests: the final head's, and documents above
	// the backfill's last height (read ahead for its last transactions'
	// receipts; a longer run indexes them as its own blocks).
	heads, beyond atomic.Int64
}

// start records a request going out; done records it back with its
// response bytes.
func (f *fetchCounts) start() (done func(bytes int64)) {
	n := f.inFlight.Add(1)
	for {
		m := f.maxIn.Load()
		if n <= m || f.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	began := time.Now()
	return func(bytes int64) {
		f.nanos.Add(int64(time.Since(began)))
		f.inFlight.Add(-1)
		f.requests.Add(1)
		f.bytes.Add(bytes)
	}
}

// countingRPC counts the calls and response bytes of the indexer.
type countingRPC struct {
	next   upstream.RPC
	counts *fetchCounts
}

var _ upstream.RPC = countingRPC{}

func (c countingRPC) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	done := c.counts.start()
	raw, err := c.next.CallRaw(ctx, method, params)
	done(int64(len(raw)))
	return raw, err
}

// countingTransport counts the HTTP requests of the document fetchers, as
// countingRPC counts calls, and apart the head's and those above to.
type countingTransport struct {
	next   http.RoundTripper
	counts *fetchCounts
	to     uint64
}

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	path := req.URL.Path
	if strings.HasSuffix(path, "/last_block/final") {
		c.counts.heads.Add(1)
	} else if h, err := strconv.ParseUint(path[strings.LastIndexByte(path, '/')+1:], 10, 64); err == nil && h > c.to {
		c.counts.beyond.Add(1)
	}
	done := c.counts.start()
	resp, err := c.next.RoundTrip(req)
	var bytes int64
	if resp != nil && resp.ContentLength > 0 {
		bytes = resp.ContentLength
	}
	done(bytes)
	return resp, err
}

// Sources the distant backfill measures.
const (
	sourceRPC      = "rpc"
	sourceNeardata = "neardata"
)

// newSource is the indexer's source over upstreamURL, its requests counted:
// rpcsource.Source (every call), or a docsource.Source over neardata (every document
// and head request; the configs it asks the RPC for once per epoch are
// not counted, as the goal sets them aside).
func (e *benchEnv) newSource(source, upstreamURL string, to uint64, counts *fetchCounts) (indexer.Source, error) {
	client, err := upstream.NewClient(upstream.Config{Endpoints: []string{upstreamURL}}, e.logger)
	if err != nil {
		return nil, err
	}
	if source == sourceRPC {
		// The counter sits below rpcsource.Source's own in-flight limit, so it
		// sees what reaches the upstream.
		return rpcsource.New(countingRPC{next: client, counts: counts},
			rpcsource.Config{Concurrency: e.o.blockConcurrency, MaxInFlight: e.o.concurrency}, e.logger)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 64
	docs, err := docsource.NewNeardataFetcher(upstream.Config{Endpoints: []string{upstreamURL},
		HTTPClient: &http.Client{Transport: countingTransport{next: transport, counts: counts, to: to}}}, e.logger)
	if err != nil {
		return nil, err
	}
	return docsource.New(docs, client, docsource.Config{Concurrency: e.o.blockConcurrency}, e.logger)
}

// countingSink counts what the indexer committed.
type countingSink struct {
	*store.Store
	blocks, rows atomic.Int64
	commitNanos  atomic.Int64 // in Write
}

var _ indexer.Sink = (*countingSink)(nil)

func (s *countingSink) Write(ctx context.Context, b *bundle.Batch) (bundle.CommitStats, error) {
	began := time.Now()
	st, err := s.Store.Write(ctx, b)
	s.commitNanos.Add(int64(time.Since(began)))
	s.blocks.Add(int64(st.Blocks))
	s.rows.Add(int64(st.Rows))
	return st, err
}

// indexRun is one backfill.
type indexRun struct {
	source         string
	heights        uint64 // heights asked (skipped ones included)
	seconds        float64
	blocks, rows   int64
	requests, resp int64
	heads, beyond  int64 // document requests for the head, and above to
	maxInFlight    int64
	commitSeconds  float64 // time spent in Write (the batch was prepared beforehand)
	callSeconds    float64 // sum of upstream call durations
	dbBytes        int64   // tables and indexes written (pg_total_relation_size, genesis excluded)
	cpu            cpuSample
}

// backfillOnce indexes heights 1..to of upstream into a fresh database
// through source (sourceRPC or sourceNeardata), the explorer tables
// written unless skipEvents.
func (e *benchEnv) backfillOnce(ctx context.Context, dbName, source, upstream string, to uint64, skipEvents bool) (indexRun, string, error) {
	dbURL, err := e.freshDatabase(ctx, dbName, true)
	if err != nil {
		return indexRun{}, "", err
	}
	st, err := store.Open(ctx, dbURL, store.Config{MaxConns: 8, SkipEvents: skipEvents}, e.logger)
	if err != nil {
		return indexRun{}, "", err
	}
	defer st.Close()
	if err := e.loadGenesis(ctx, st); err != nil {
		return indexRun{}, "", err
	}
	before, err := databaseBytes(ctx, st)
	if err != nil {
		return indexRun{}, "", err
	}
	counts := &fetchCounts{}
	src, err := e.newSource(source, upstream, to, counts)
	if err != nil {
		return indexRun{}, "", err
	}
	sink := &countingSink{Store: st}
	from := uint64(1)
	ix, err := indexer.New(indexer.Config{
		From: &from, To: &to, Workers: e.o.workers, BatchSize: e.o.batchSize,
		ProgressInterval: 10 * time.Second,
	}, src, sink, e.logger)
	if err != nil {
		return indexRun{}, "", err
	}
	began, cpu0 := time.Now(), sampleCPU(e.chain.pid)
	if err := ix.Run(ctx); err != nil {
		return indexRun{}, "", err
	}
	cpu := sampleCPU(e.chain.pid).sub(cpu0)
	r := indexRun{
		source: source, heights: to - from + 1, seconds: since(began), blocks: sink.blocks.Load(), rows: sink.rows.Load(),
		requests: counts.requests.Load(), resp: counts.bytes.Load(), maxInFlight: counts.maxIn.Load(),
		heads: counts.heads.Load(), beyond: counts.beyond.Load(),
		commitSeconds: time.Duration(sink.commitNanos.Load()).Seconds(),
		callSeconds:   time.Duration(counts.nanos.Load()).Seconds(),
		cpu:           cpu,
	}
	after, err := databaseBytes(ctx, st)
	if err != nil {
		return indexRun{}, "", err
	}
	r.dbBytes = after - before
	return r, dbURL, nil
}

// backfill measures the indexer against the plain-COPY baseline.
func (e *benchEnv) backfill(ctx context.Context) error {
	var idx []indexRun
	for i := range e.o.backfillRuns {
		r, dbURL, err := e.backfillOnce(ctx, "nearline_bench_index", sourceRPC, e.chain.plainURL, e.o.blocks, false)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "index run %d: %d blocks, %d rows in %.1fs (%.1fs writing): %.1f blocks/s, %.0f rows/s, %d requests\n",
			i+1, r.blocks, r.rows, r.seconds, r.commitSeconds, float64(r.blocks)/r.seconds, float64(r.rows)/r.seconds, r.requests)
		perBlock := func(s float64) float64 { return s / float64(r.blocks) * 1000 }
		fmt.Fprintf(os.Stderr, "index run %d CPU: machine %.0f%% busy; ms per block: indexer %.1f, PostgreSQL %.1f, simulator %.1f, other %.1f\n",
			i+1, 100*r.cpu.busy/r.cpu.total, perBlock(r.cpu.self), perBlock(r.cpu.postgres), perBlock(r.cpu.sim),
			perBlock(r.cpu.busy-r.cpu.self-r.cpu.postgres-r.cpu.sim))
		idx = append(idx, r)
		e.indexed = dbURL
	}
	dir, err := os.MkdirTemp("", "nearline-bench-")
	if err != nil {
		return fmt.Errorf("dump directory: %w", err)
	}
	defer os.RemoveAll(dir)
	dump, err := dumpTables(ctx, e.indexed, dir)
	if err != nil {
		return err
	}
	var copies []copyRun
	for i := range e.o.backfillRuns {
		dbURL, err := e.freshDatabase(ctx, "nearline_bench_copy", true)
		if err != nil {
			return err
		}
		c, err := loadTables(ctx, dbURL, dump, e.o.blocks)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "copy run %d: %d rows, %d bytes in %.2fs: %.0f rows/s\n", i+1, c.rows, c.bytes, c.seconds, float64(c.rows)/c.seconds)
		copies = append(copies, c)
	}
	e.report.backfill = idx
	e.report.copies = copies
	return nil
}

// latencyBackfill measures the indexer against a distant upstream, through
// JSON-RPC and through neardata documents.
func (e *benchEnv) latencyBackfill(ctx context.Context) error {
	to := min(e.o.latencyBlocks, e.o.blocks)
	for _, source := range []string{sourceRPC, sourceNeardata} {
		for i := range e.o.runs {
			r, _, err := e.backfillOnce(ctx, "nearline_bench_latency", source, e.chain.distantURL, to, false)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "distant run %d (--source %s): %d blocks in %.1fs (%.1fs writing): %.2f blocks/s, %d requests (mean %.1f ms, %.1f in flight on average), at most %d in flight\n",
				i+1, source, r.blocks, r.seconds, r.commitSeconds, float64(r.blocks)/r.seconds, r.requests, 1000*r.callSeconds/float64(r.requests), r.callSeconds/r.seconds, r.maxInFlight)
			if source == sourceRPC {
				e.report.latency = append(e.report.latency, r)
			} else {
				e.report.docLatency = append(e.report.docLatency, r)
			}
		}
	}
	e.report.concurrency = e.o.concurrency
	if e.report.concurrency == 0 {
		e.report.concurrency = rpcsource.DefaultMaxInFlight
	}
	e.report.workers = cmp.Or(e.o.workers, indexer.DefaultWorkers)
	return nil
}
