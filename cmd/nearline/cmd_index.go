package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/basestate"
	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/metrics"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/store"
	"github.com/prometheus/client_golang/prometheus"
)

// indexPoolSize is the indexer's default PostgreSQL pool size: a commit
// holds one connection; the rest serve genesis loads, snapshots and the
// tx-status revisits between commits.
const indexPoolSize = 8

// memoryLimitPerBudget is, in halves, the Go runtime's soft memory limit
// per byte of --memory-budget when GOMEMLIMIT sets none: 2.5 times the
// budget, room for the blocks it bounds, the documents read ahead for
// transaction statuses, the server and the runtime.
const memoryLimitPerBudget = 5

// indexFlags are the flags of `nearline index`; `nearline run` registers
// them too (registerIndexFlags) and calls indexWith.
type indexFlags struct {
	db               *databaseFlags
	upstream         *string
	source           *string
	rpcUpstream      *string
	from, to         *string
	workers          *int
	blockConcurrency *int
	upstreamInFlight *int
	batchSize        *int
	requestTimeout   *time.Duration
	pollInterval     *time.Duration
	progressInterval *time.Duration
	metricsListen    *string
	genesis          *string
	snapshotAccounts *string
	maxConns         *int
	events           *bool
	cursor           *string
	memoryBudget     *string
	upstreamRate     *float64
}

func registerIndexFlags(fs *flag.FlagSet, env *environment) *indexFlags {
	return &indexFlags{
		db:               registerDatabaseFlags(fs, env),
		upstream:         stringFlag(fs, env, "upstream", "NEARLINE_UPSTREAM", "", "comma-separated URLs, tried in order with failover (required): NEAR JSON-RPC nodes for --source rpc, neardata base URLs for neardata, a NEAR Lake directory or base URL for lake"),
		source:           stringFlag(fs, env, "source", "NEARLINE_SOURCE", sourceRPC, "where blocks come from: rpc (JSON-RPC, many calls per block), neardata or lake (one block document per height)"),
		rpcUpstream:      stringFlag(fs, env, "rpc-upstream", "NEARLINE_RPC_UPSTREAM", "", "with --source neardata or lake: comma-separated NEAR JSON-RPC URLs for the genesis and protocol configs (once per epoch), lake's final head and --snapshot-accounts (default: none; then --genesis is required)"),
		from:             stringFlag(fs, env, "from", "NEARLINE_FROM", "", "first height to index (default: after the cursor, or the genesis height on an empty archive)"),
		to:               stringFlag(fs, env, "to", "NEARLINE_TO", "", "last height to index, then exit (default: follow the head until interrupted)"),
		workers:          intFlag(fs, env, "workers", "NEARLINE_WORKERS", indexer.DefaultWorkers, "blocks fetched at once"),
		blockConcurrency: intFlag(fs, env, "block-concurrency", "NEARLINE_BLOCK_CONCURRENCY", rpcsource.DefaultConcurrency, "upstream calls made at once for one block (chunks, changes, tx statuses)"),
		upstreamInFlight: intFlag(fs, env, "upstream-concurrency", "NEARLINE_UPSTREAM_CONCURRENCY", rpcsource.DefaultMaxInFlight, "upstream calls in flight at most, over all blocks fetched together (-1 for no bound)"),
		batchSize:        intFlag(fs, env, "batch-size", "NEARLINE_BATCH_SIZE", indexer.DefaultBatchSize, "heights committed per transaction"),
		requestTimeout:   durationFlag(fs, env, "request-timeout", "NEARLINE_REQUEST_TIMEOUT", near.DefaultTimeout, "time limit of one upstream request"),
		pollInterval:     durationFlag(fs, env, "poll-interval", "NEARLINE_POLL_INTERVAL", indexer.DefaultPollInterval, "how often the final head is polled when caught up (within a batch of it); further behind, every 30 s"),
		progressInterval: durationFlag(fs, env, "progress-interval", "NEARLINE_PROGRESS_INTERVAL", indexer.DefaultProgressInterval, "how often progress is logged"),
		metricsListen:    stringFlag(fs, env, "metrics-listen", "NEARLINE_METRICS_LISTEN", "", "address to serve Prometheus metrics on at /metrics (default: off)"),
		genesis:          stringFlag(fs, env, "genesis", "NEARLINE_GENESIS", "", "nearcore genesis.json whose records are the state at the genesis height"),
		snapshotAccounts: stringFlag(fs, env, "snapshot-accounts", "NEARLINE_SNAPSHOT_ACCOUNTS", "", "comma-separated accounts whose state at --from is fetched as the start of their history"),
		maxConns:         intFlag(fs, env, "db-max-conns", "NEARLINE_DB_MAX_CONNS", indexPoolSize, "PostgreSQL pool size"),
		events:           boolFlag(fs, env, "events", "NEARLINE_EVENTS", true, "write the explorer tables (ft_events, nft_events, mt_events, account_activity) with every block; false skips them"),
		memoryBudget:     stringFlag(fs, env, "memory-budget", "NEARLINE_MEMORY_BUDGET", formatBytes(indexer.DefaultMemoryBudget), "bytes of blocks the pipeline holds at once (fetched, decoded, prepared, being written), e.g. 192MiB or 1GiB: batches are cut short to stay within it, whatever the blocks weigh"),
		upstreamRate:     float64Flag(fs, env, "upstream-rate", "NEARLINE_UPSTREAM_RATE", 0, "with --source neardata or lake: requests a second to the document upstream at most, retries included (0: no bound; a free neardata endpoint allows 3: 180 a minute per IP)"),
		cursor:           stringFlag(fs, env, "cursor", "NEARLINE_CURSOR", store.DefaultCursor, "the indexer_cursor row (range) this indexer advances: several indexers with their own --cursor and --from/--to fill disjoint ranges of one archive"),
	}
}

func parseHeight(name, v string) (*uint64, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	h, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("--%s %q: want a block height", name, v)
	}
	return &h, nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Values of --source.
const (
	sourceRPC      = "rpc"
	sourceNeardata = "neardata"
	sourceLake     = "lake"
)

// check reports a --cursor name or a --source combination that cannot
// work.
func (f *indexFlags) check() error {
	if err := f.db.check(); err != nil {
		return err
	}
	if err := store.ValidCursorName(*f.cursor); err != nil {
		return fmt.Errorf("--cursor: %w", err)
	}
	switch *f.source {
	case sourceRPC:
		if *f.rpcUpstream != "" {
			return errors.New("--rpc-upstream is for --source neardata or lake; with --source rpc, --upstream is the RPC node")
		}
	case sourceNeardata, sourceLake:
		if *f.rpcUpstream == "" && *f.genesis == "" {
			return fmt.Errorf("--source %s needs --rpc-upstream (configs) or --genesis (the genesis config, no protocol configs)", *f.source)
		}
		if *f.source == sourceLake && *f.rpcUpstream == "" && (strings.HasPrefix(*f.upstream, "http://") || strings.HasPrefix(*f.upstream, "https://")) {
			return errors.New("--source lake over HTTP needs --rpc-upstream for the final head")
		}
	default:
		return fmt.Errorf("--source %q: want rpc, neardata or lake", *f.source)
	}
	return nil
}

// forwardTo is the RPC node the server forwards what the archive cannot
// answer to: the first RPC upstream, none for a document source without
// --rpc-upstream.
func (f *indexFlags) forwardTo() string {
	if *f.source == sourceRPC {
		return splitList(*f.upstream)[0]
	}
	if rpcs := splitList(*f.rpcUpstream); len(rpcs) > 0 {
		return rpcs[0]
	}
	return ""
}

// runIndex follows finalized blocks of the upstream into PostgreSQL.
func runIndex(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "index", "[--database-url URL | --data-dir DIR] [--source rpc|neardata|lake] --upstream URL[,URL...] [--from H] [--to H] [flags]")
	flags := registerIndexFlags(fs, env)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *flags.upstream == "" {
		fmt.Fprintln(fs.Output(), "nearline index: --upstream (or NEARLINE_UPSTREAM) is required")
		fs.Usage()
		return errUsage
	}
	if err := flags.check(); err != nil {
		fmt.Fprintln(fs.Output(), "nearline index:", err)
		return errUsage
	}
	databaseURL, release, err := flags.db.open(ctx, env, true)
	if err != nil {
		return err
	}
	defer release()
	if err := store.MigrateLogged(ctx, databaseURL, env.logger); err != nil {
		return err
	}
	s, err := store.Open(ctx, databaseURL, store.Config{MaxConns: int32(*flags.maxConns), Logger: env.logger,
		SkipEvents: !*flags.events, Cursor: *flags.cursor})
	if err != nil {
		return err
	}
	defer s.Close()
	return indexWith(ctx, env, flags, s, metrics.NewRegistry())
}

// indexWith runs the indexer on an open, migrated store, its metrics
// registered on reg (served at --metrics-listen).
func indexWith(ctx context.Context, env *environment, flags *indexFlags, s *store.Store, reg *prometheus.Registry) error {
	m, err := indexer.NewMetrics(reg)
	if err != nil {
		return err
	}
	from, err := parseHeight("from", *flags.from)
	if err != nil {
		return err
	}
	to, err := parseHeight("to", *flags.to)
	if err != nil {
		return err
	}
	// The JSON-RPC client: the upstream itself, or a document source's
	// --rpc-upstream (nil without one).
	var client *near.Client
	if rpcs := splitList(*flags.upstream); *flags.source != sourceRPC {
		rpcs = splitList(*flags.rpcUpstream)
		if len(rpcs) > 0 {
			client, err = newClient(env, flags, rpcs, m)
		}
	} else {
		client, err = newClient(env, flags, rpcs, m)
	}
	if err != nil {
		return err
	}
	if *flags.genesis != "" {
		if err := loadGenesis(ctx, env, *flags.genesis, s); err != nil {
			return err
		}
		start, err := s.HistoryStart(ctx)
		if err != nil {
			return err
		}
		// A split backfill's range above the genesis is not a mistake: its
		// state is answered once the ranges below it are in.
		if ranges, err := s.Ranges(ctx); err != nil {
			return err
		} else if len(ranges) == 0 && from != nil && *from > start && *flags.cursor == store.DefaultCursor {
			return fmt.Errorf("--genesis holds the state at height %d; indexing from --from %d would leave blocks %d-%d out of the state history (for one range of a split backfill, give it a --cursor)", start, *from, start, *from-1)
		}
	}
	if accounts := splitList(*flags.snapshotAccounts); len(accounts) > 0 {
		if from == nil {
			return errors.New("--snapshot-accounts needs --from: the height the snapshot is taken at")
		}
		if client == nil {
			return errors.New("--snapshot-accounts with a document source needs --rpc-upstream")
		}
		if err := basestate.Snapshot(ctx, client, s, *from, accounts, env.logger); err != nil {
			return err
		}
	}
	budget, err := parseBytes(*flags.memoryBudget)
	if err != nil {
		return fmt.Errorf("--memory-budget: %w", err)
	}
	if env.getenv("GOMEMLIMIT") == "" {
		// The heap's garbage is collected before the process outgrows what
		// the budget allows it, rather than at twice the live heap.
		debug.SetMemoryLimit(budget * memoryLimitPerBudget / 2)
	}
	src, err := newSource(env, flags, client, m)
	if err != nil {
		return err
	}
	ix, err := indexer.New(indexer.Config{
		From: from, To: to,
		Workers: *flags.workers, BatchSize: *flags.batchSize,
		PollInterval: *flags.pollInterval, ProgressInterval: *flags.progressInterval,
		MemoryBudget: budget,
		Metrics:      m,
	}, src, s, env.logger)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	runCtx, stopMetrics := context.WithCancel(gctx)
	if *flags.metricsListen != "" {
		g.Go(func() error { return metrics.Serve(runCtx, *flags.metricsListen, reg, env.logger) })
	}
	g.Go(func() error {
		defer stopMetrics()
		return ix.Run(gctx)
	})
	return g.Wait()
}

func newClient(env *environment, flags *indexFlags, endpoints []string, metrics *indexer.Metrics) (*near.Client, error) {
	return near.NewClient(near.ClientConfig{
		Endpoints: endpoints,
		Timeout:   *flags.requestTimeout,
		Logger:    env.logger,
		OnError:   metrics.UpstreamError,
	})
}

// newSource builds the --source: NodeSource over client, or a DocSource
// over neardata or lake with client (possibly nil) for configs.
func newSource(env *environment, flags *indexFlags, client *near.Client, metrics *indexer.Metrics) (indexer.Source, error) {
	if *flags.source == sourceRPC {
		src, err := rpcsource.NewNodeSource(client, rpcsource.NodeConfig{
			Concurrency: *flags.blockConcurrency,
			MaxInFlight: *flags.upstreamInFlight,
		}, env.logger)
		if err != nil {
			return nil, fmt.Errorf("--block-concurrency %d, --upstream-concurrency %d: %w", *flags.blockConcurrency, *flags.upstreamInFlight, err)
		}
		return src, nil
	}
	httpCfg := near.ClientConfig{
		Endpoints:   splitList(*flags.upstream),
		Timeout:     *flags.requestTimeout,
		RequestRate: *flags.upstreamRate,
		Logger:      env.logger,
		OnError:     metrics.UpstreamError,
	}
	var rpc rpcsource.RPC // a nil *near.Client must stay a nil interface
	if client != nil {
		rpc = client
	}
	var docs docsource.DocFetcher
	var err error
	if *flags.source == sourceNeardata {
		docs, err = docsource.NewNeardataFetcher(httpCfg)
	} else {
		docs, err = docsource.NewLakeFetcher(*flags.upstream, httpCfg, rpc)
	}
	if err != nil {
		return nil, err
	}
	cfg := docsource.DocConfig{Concurrency: *flags.blockConcurrency, Logger: env.logger}
	if rpc == nil {
		f, err := os.Open(*flags.genesis)
		if err != nil {
			return nil, fmt.Errorf("open genesis: %w", err)
		}
		defer f.Close()
		if cfg.Genesis, err = docsource.GenesisConfigFromFile(f); err != nil {
			return nil, err
		}
		env.logger.Warn("no --rpc-upstream: the genesis config comes from --genesis and protocol configs are not stored", "source", *flags.source)
	}
	return docsource.NewDocSource(docs, rpc, cfg)
}

func loadGenesis(ctx context.Context, env *environment, path string, s *store.Store) error {
	if _, err := s.HistoryStart(ctx); err == nil {
		env.logger.Info("history start already recorded; not loading genesis records again", "genesis", path)
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open genesis: %w", err)
	}
	defer f.Close()
	_, err = basestate.LoadGenesis(ctx, f, s, env.logger)
	return err
}
