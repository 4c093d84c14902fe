package main

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/basestate"
	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/internal/metrics"
	"github.com/nearline/nearline/internal/outage"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/upstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/nearline/nearline/internal/envflag"
)

// mainnetArgs follow mainnet as the README does.
const mainnetArgs = "--source neardata --upstream https://mainnet.neardata.xyz --rpc-upstream https://free.rpc.fastnear.com " +
	"--from latest --upstream-rate 3"

// runIndex follows finalized blocks of the upstream into PostgreSQL.
func runIndex(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "index", "[--database-url URL | --data-dir DIR] [--source rpc|neardata|lake] --upstream URL[,URL...] [--from H|latest] [--to H] [flags]",
		envflag.Example{Args: mainnetArgs, Does: "mainnet from its final head on (no history before it), within neardata's free tier"},
		envflag.Example{Args: "--database-url postgres://nearline@127.0.0.1/nearline --upstream http://127.0.0.1:3031 --genesis genesis.json --to 2000",
			Does: "a JSON-RPC node's first 2000 heights with the state its genesis.json holds, then exit"},
		envflag.Example{Args: "--upstream http://127.0.0.1:3031 --cursor low --from 0 --to 99999",
			Does: "one range of a split backfill: several indexers, each with its own --cursor (docs/scaling.md)"})
	flags := registerIndexFlags(fs, env)
	if err := env.flags().Parse(fs, args, flags.check); err != nil {
		return err
	}
	s, closeStore, err := flags.openStore(ctx, 0)
	if err != nil {
		return err
	}
	defer closeStore()
	return indexWith(ctx, env, flags, s, metrics.NewRegistry(), flags.tracker())
}

// openStore migrates and opens the archive for the indexer, with extra
// connections for a server sharing the pool (run).
func (f *indexFlags) openStore(ctx context.Context, extraConns int) (*store.Store, func(), error) {
	return f.db.openStore(ctx, f.env, archiveUse{migrate: true, noMigrate: f.noMigrate, cfg: store.Config{
		MaxConns: int32(f.maxConns + extraConns), SkipEvents: !f.events, Cursor: f.cursor,
	}})
}

// tracker is the outage.Tracker of the upstream's calls, logging to the
// command's logger.
func (f *indexFlags) tracker() *outage.Tracker {
	return outage.New(outage.Config{Name: envflag.ShownURLs(f.upstream),
		Flags: map[string]string{"--upstream": f.upstream, "--rpc-upstream": f.rpcUpstream}}, f.env.logger)
}

// indexWith runs the indexer on an open, migrated store, its metrics
// registered on reg (served at --metrics-listen), its upstream calls
// through tracker. Before anything is written it checks that the
// upstream is of the chain of --genesis and of the archive.
func indexWith(ctx context.Context, env *environment, flags *indexFlags, s *store.Store, reg *prometheus.Registry, tracker *outage.Tracker) error {
	m, err := indexer.NewMetrics(reg)
	if err != nil {
		return err
	}
	// The JSON-RPC client: the upstream itself, or a document source's
	// --rpc-upstream (nil without one).
	var client *upstream.Client
	if rpcs, apiKey := flags.rpcEndpoints(); len(rpcs) > 0 {
		if client, err = newClient(env, flags, rpcs, apiKey, m); err != nil {
			return err
		}
	}
	src, err := newSource(env, flags, client, m)
	if err != nil {
		return err
	}
	patience := flags.indexer.UpstreamPatience
	if flags.indexer.To == nil {
		patience = 0 // following: wait for the upstream as long as it takes
	}
	up := upstreamCalls{tracker: tracker, patience: patience}
	// An archive that never recorded its chain never heard its upstream:
	// that one is waited for --upstream-patience, not for ever.
	_, err = s.ChainIdentity(ctx)
	firstStart := errors.Is(err, store.ErrNotFound)
	if firstStart {
		up.patience = flags.indexer.UpstreamPatience
	}
	if err := checkChain(ctx, env, flags, s, src, client, up); err != nil {
		if firstStart {
			return outage.NeverAnswered(err)
		}
		return err
	}
	up.patience = patience
	from := flags.indexer.From
	if flags.fromLatest {
		if from, err = latestFrom(ctx, env, s, src, up); err != nil {
			return err
		}
	}
	if flags.genesis != "" {
		if err := basestate.LoadGenesisFile(ctx, flags.genesis, s, env.logger); err != nil {
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
		} else if len(ranges) == 0 && from != nil && *from > start && flags.cursor == store.DefaultCursor {
			return fmt.Errorf("--genesis holds the state at height %d; indexing from --from %d would leave blocks %d-%d out of the state history (for one range of a split backfill, give it a --cursor)", start, *from, start, *from-1)
		}
	}
	if accounts := envflag.Split(flags.snapshot); len(accounts) > 0 && from != nil {
		if err := basestate.Snapshot(ctx, client, s, *from, accounts, env.logger); err != nil {
			return err
		}
	}
	if env.getenv("GOMEMLIMIT") == "" {
		// The heap's garbage is collected before the process outgrows what
		// the budget allows it, rather than at twice the live heap.
		debug.SetMemoryLimit(flags.indexer.MemoryBudget * memoryLimitPerBudget / 2)
		if env.getenv("GOGC") == "" {
			// Under that limit the collector can wait for more garbage
			// than its default: it runs half as often.
			debug.SetGCPercent(indexGCPercent)
		}
	}
	cfg := flags.indexer
	cfg.From, cfg.Upstream, cfg.Metrics = from, tracker, m
	ix, err := indexer.New(cfg, src, s, env.logger)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	runCtx, stopMetrics := context.WithCancel(gctx)
	if flags.metricsListen != "" {
		g.Go(func() error { return metrics.Serve(runCtx, flags.metricsListen, reg, env.logger) })
	}
	g.Go(func() error {
		defer stopMetrics()
		return ix.Run(gctx)
	})
	return g.Wait()
}

// latestFrom is --from latest: nil (resume after the cursor) when the
// cursor holds a range, else the upstream's final head.
func latestFrom(ctx context.Context, env *environment, s *store.Store, src indexer.Source, up upstreamCalls) (*uint64, error) {
	r, ok, err := s.Range(ctx)
	if err != nil {
		return nil, err
	}
	if ok {
		env.logger.Info("--from latest: the cursor holds heights already; resuming after it", "first", r.First, "cursor", r.Last.Height)
		return nil, nil
	}
	var head uint64
	err = up.do(ctx, "final head", func(ctx context.Context) (err error) {
		head, err = src.FinalHead(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("--from latest: fetch the final head: %w", err)
	}
	env.logger.Info("--from latest: starting at the upstream's final head", "from", head)
	return &head, nil
}

// newClient is the JSON-RPC client of endpoints, apiKey (none: "") sent
// to them as a bearer token.
func newClient(env *environment, flags *indexFlags, endpoints []string, apiKey string, metrics *indexer.Metrics) (*upstream.Client, error) {
	return upstream.NewClient(upstream.Config{
		Endpoints:   endpoints,
		BearerToken: apiKey,
		Timeout:     flags.http.Timeout,
		OnError:     metrics.UpstreamError,
	}, logs.AtDebug(env.logger))
}

// newSource builds the --source: rpcsource.Source over client, or a docsource.Source
// over neardata or lake with client (possibly nil) for configs.
func newSource(env *environment, flags *indexFlags, client *upstream.Client, metrics *indexer.Metrics) (indexer.Source, error) {
	if flags.source == sourceRPC {
		src, err := rpcsource.New(client, flags.rpc, env.logger)
		if err != nil {
			return nil, fmt.Errorf("--block-concurrency %d, --upstream-concurrency %d: %w", flags.rpc.Concurrency, flags.rpc.MaxInFlight, err)
		}
		return src, nil
	}
	httpCfg := flags.http
	httpCfg.Endpoints, httpCfg.BearerToken, httpCfg.OnError = envflag.Split(flags.upstream), flags.upstreamAPIKey, metrics.UpstreamError
	var rpc upstream.RPC // a nil *upstream.Client must stay a nil interface
	if client != nil {
		rpc = client
	}
	var docs docsource.Fetcher
	var err error
	if flags.source == sourceNeardata {
		docs, err = docsource.NewNeardataFetcher(httpCfg, logs.AtDebug(env.logger))
	} else {
		docs, err = docsource.NewLakeFetcher(httpCfg, rpc, logs.AtDebug(env.logger))
	}
	if err != nil {
		return nil, err
	}
	cfg := docsource.Config{Concurrency: flags.rpc.Concurrency}
	if rpc == nil {
		if cfg.Genesis, err = basestate.GenesisConfigOf(flags.genesis); err != nil {
			return nil, err
		}
		env.logger.Warn("no --rpc-upstream: the genesis config comes from --genesis and protocol configs are not stored", "source", flags.source)
	}
	return docsource.New(docs, rpc, cfg, env.logger)
}

// upstreamName is the upstream as messages name it (redacted).
func upstreamName(urls string) string {
	return "the upstream " + envflag.ShownURLs(urls)
}
