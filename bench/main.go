// Command bench measures Nearline against the physical limits of the machine
// it runs on and prints one table (see docs/performance.md):
//
//	go run ./bench [--blocks 10000] [--runs 3] [--latency 50ms] [--latency-blocks 500]
//
// It produces a mainnet-shaped simulated chain in memory (6 shards, about 100
// transactions per block, the simulator's deployed contracts), serves it on
// loopback, and measures, each in fresh databases on --database-url's server:
//
//   - backfill: the indexer package in-process, wired as `nearline index`
//     (rpcsource.Source over upstream.Client over HTTP, store.Commit), against plain
//     COPY FROM of the same rows into the same (migrated, empty) tables;
//   - backfill against a distant upstream (the simulator's --latency), against
//     the bound the fetch concurrency and the latency allow;
//   - serving (the archive backend through rpcserve, over the backfilled
//     database) against the simulator answering from memory and a bare
//     handler running one SQL statement per request;
//   - storage per block against the JSON-RPC responses, raw and gzip'd;
//   - with --only replica: serving from a PostgreSQL primary plus a
//     streaming replica (a `nearline serve` on each behind a round-robin)
//     against one `nearline serve` on the primary.
//
// The real phase (--only real) measures instead a chain of --real-blocks
// linked copies of a real block document (--real-doc; bench/realchain),
// served as neardata on loopback and indexed by the nearline binary built
// from this checkout (`nearline index --source neardata`), then served by
// `nearline serve`: bytes per block per table against the document's raw,
// gzip'd and zstd'd size, CPU per block of the indexer process and of
// PostgreSQL, blocks/s, the indexer's max RSS and serving latency (see
// docs/performance-real.md). It needs no simulated chain.
//
// It is a program, not a test: `go test ./...` never runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nearline/nearline/internal/fixture"
)

type options struct {
	databaseURL      string
	blocks           uint64
	shards           int
	txsPerBlock      int
	deployRate       float64
	seed             uint64
	runs             int
	backfillRuns     int
	workers          int
	batchSize        int
	concurrency      int
	blockConcurrency int
	latency          time.Duration
	latencyBlocks    uint64
	eventsBlocks     uint64
	replicaBlocks    uint64
	realBlocks       uint64
	realDoc          string
	realEvents       bool
	clients          int
	serveTime        time.Duration
	only             map[string]bool
	cpuprofile       string
	keep             bool
	simProcess       bool
	simListen        string
	verbose          bool
}

// simPhases are the phases on the simulated chain.
var simPhases = []string{"backfill", "latency", "split", "storage", "serve", "events", "replica"}

// want reports whether phase runs: every phase but replica by default,
// or those --only names.
func (o options) want(phase string) bool {
	return (len(o.only) == 0 && phase != "replica") || o.only[phase]
}

func main() {
	var o options
	var only string
	defURL := os.Getenv("NEARLINE_TEST_DATABASE_URL")
	if defURL == "" {
		defURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	flag.StringVar(&o.databaseURL, "database-url", defURL, "PostgreSQL server to benchmark on (databases nearline_bench_* are created and dropped there)")
	flag.Uint64Var(&o.blocks, "blocks", 10_000, "heights of simulated chain to produce and backfill")
	flag.IntVar(&o.shards, "shards", 6, "simulated shards")
	flag.IntVar(&o.txsPerBlock, "txs-per-block", 100, "mean transactions per block")
	flag.Float64Var(&o.deployRate, "deploy-rate", 0.001, "fraction of transactions that deploy a contract (mainnet: about 0.001)")
	flag.Uint64Var(&o.seed, "seed", 1, "chain seed")
	flag.IntVar(&o.runs, "runs", 3, "repetitions of every measurement; the table shows medians")
	flag.IntVar(&o.backfillRuns, "backfill-runs", 1, "repetitions of the (long) backfill and its COPY baseline")
	flag.IntVar(&o.workers, "workers", 0, "indexer --workers (0: the indexer's default)")
	flag.IntVar(&o.batchSize, "batch-size", 0, "indexer --batch-size (0: the indexer's default)")
	flag.IntVar(&o.concurrency, "upstream-concurrency", 0, "upstream calls in flight at once, rpcsource.Config.MaxInFlight (0: its default, rpcsource.DefaultMaxInFlight; -1: no bound)")
	flag.IntVar(&o.blockConcurrency, "block-concurrency", 0, "upstream calls at once for one block (0: the indexer's default)")
	flag.DurationVar(&o.latency, "latency", 50*time.Millisecond, "simulator latency of the distant-upstream backfill")
	flag.Uint64Var(&o.latencyBlocks, "latency-blocks", 500, "heights backfilled from the distant upstream")
	flag.Uint64Var(&o.eventsBlocks, "events-blocks", 1000, "heights backfilled by the events phase, with the explorer tables and without (at most --blocks)")
	flag.Uint64Var(&o.replicaBlocks, "replica-blocks", 500, "heights backfilled by the replica phase into a primary with a streaming replica (at most --blocks)")
	flag.Uint64Var(&o.realBlocks, "real-blocks", 300, "heights of the real phase's chain of linked copies of --real-doc, indexed by the nearline binary through --source neardata")
	flag.StringVar(&o.realDoc, "real-doc", filepath.Join(fixture.Dir(), "real", "neardata", "mainnet-151768255.json"), "the real phase's block document (neardata's /v0/block/:height shape), e.g. testdata/fixtures/real/neardata/testnet-232952651.json")
	flag.BoolVar(&o.realEvents, "real-events", true, "the real phase's indexer writes the explorer tables (nearline index --events)")
	flag.IntVar(&o.clients, "clients", 16, "concurrent clients of the serving benchmark")
	flag.DurationVar(&o.serveTime, "serve-time", 3*time.Second, "duration of one serving measurement")
	flag.StringVar(&only, "only", "", "comma-separated phases to run: backfill, latency, split, serve, storage, events, replica, real (default all but replica, which makes PostgreSQL clusters of its own; serve and storage need backfill)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of each phase to PREFIX.<phase>.prof")
	flag.BoolVar(&o.simProcess, "sim-process", true, "run the simulator in a child process (its in-memory chain then stays out of the indexer's garbage collections)")
	flag.StringVar(&o.simListen, "sim-listen", "", "internal: be the simulator child process (the address is unused: it serves on loopback ports it prints)")
	flag.BoolVar(&o.keep, "keep", false, "keep the benchmark databases")
	flag.BoolVar(&o.verbose, "v", false, "log the indexer and store")
	flag.Parse()
	o.only = map[string]bool{}
	for _, p := range strings.Split(only, ",") {
		if p = strings.TrimSpace(p); p != "" {
			o.only[p] = true
		}
	}
	if o.only["serve"] || o.only["storage"] {
		o.only["backfill"] = true
	}
	o.runs, o.backfillRuns = max(o.runs, 1), max(o.backfillRuns, 1)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.simListen != "" {
		o.simProcess = false
		if err := runSimChild(ctx, o); err != nil {
			fmt.Fprintln(os.Stderr, "bench simulator:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	// The simulated chain lives in this process; memory is plentiful and GC
	// time would otherwise be charged to the indexer's and server's share of
	// the CPU.
	setGC()
	logger := slog.New(slog.DiscardHandler)
	if o.verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	env := &benchEnv{o: o, logger: logger, report: &report{}}
	env.report.machine = machine(ctx, o.databaseURL)
	defer env.dropDatabases(context.WithoutCancel(ctx))
	if o.want("real") {
		if err := env.phase(ctx, "real", env.real); err != nil {
			return err
		}
	}
	if !slices.ContainsFunc(simPhases, o.want) {
		env.report.print(os.Stdout, o)
		return nil
	}
	fmt.Fprintf(os.Stderr, "producing %d heights (%d shards, %d txs/block)...\n", o.blocks, o.shards, o.txsPerBlock)
	began := time.Now()
	ch, err := produceChain(ctx, o)
	if err != nil {
		return err
	}
	defer ch.close()
	fmt.Fprintf(os.Stderr, "produced in %s\n", time.Since(began).Round(time.Second))
	env.chain = ch
	runs := map[string]func(context.Context) error{
		"backfill": env.backfill, "latency": env.latencyBackfill, "split": env.splitBackfill,
		"storage": env.storage, "serve": env.serve, "events": env.events, "replica": env.replica,
	}
	for _, name := range simPhases {
		if o.want(name) {
			if err := env.phase(ctx, name, runs[name]); err != nil {
				return err
			}
		}
	}
	env.report.print(os.Stdout, o)
	return nil
}

// phase runs one measurement, under a CPU profile when asked.
func (e *benchEnv) phase(ctx context.Context, name string, f func(context.Context) error) error {
	fmt.Fprintf(os.Stderr, "== %s\n", name)
	if e.o.cpuprofile != "" {
		file, err := os.Create(e.o.cpuprofile + "." + name + ".prof")
		if err != nil {
			return fmt.Errorf("create profile: %w", err)
		}
		defer file.Close()
		if err := pprof.StartCPUProfile(file); err != nil {
			return fmt.Errorf("start profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	runtime.GC()
	if err := f(ctx); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// setGC trades memory for fewer collections of the simulator's large heap.
func setGC() {
	debug.SetGCPercent(200)
	if os.Getenv("GOMEMLIMIT") == "" {
		// A 10,000-block chain is ~10 GiB live in the simulator; let the
		// heap use 60% of the machine's memory, not more.
		if total := memTotal(); total > 0 {
			debug.SetMemoryLimit(total * 6 / 10)
		}
	}
}
