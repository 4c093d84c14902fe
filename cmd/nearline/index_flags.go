package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/httpcall"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/upstream"

	"github.com/nearline/nearline/internal/envflag"
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

// indexGCPercent is the collector's GOGC when neither GOGC nor GOMEMLIMIT
// is set: the heap may grow to three times what is live between
// collections, the memory limit above bounding it
// (docs/performance-ingest.md).
const indexGCPercent = 200

// indexFlags are the flags of `nearline index`; `nearline run` registers
// them too (registerIndexFlags) and calls indexWith.
type indexFlags struct {
	fs  *flag.FlagSet
	env *environment
	db  *databaseFlags

	upstream, upstreamAPIKey, source string
	rpcUpstream, rpcUpstreamKey      string
	fromLatest                       bool
	metricsListen, genesis, snapshot string
	maxConns                         int
	events, noMigrate                bool
	cursor                           string
	indexer                          indexer.Config   // but Upstream and Metrics
	rpc                              rpcsource.Config // Concurrency (docsource's too) and MaxInFlight
	http                             upstream.Config  // Timeout and RequestRate
}

func registerIndexFlags(fs *flag.FlagSet, env *environment) *indexFlags {
	f := &indexFlags{fs: fs, env: env, db: registerDatabaseFlags(fs), source: sourceRPC, maxConns: indexPoolSize,
		events: true, cursor: store.DefaultCursor,
		indexer: indexer.Config{Workers: indexer.DefaultWorkers, BatchSize: indexer.DefaultBatchSize,
			PollInterval: indexer.DefaultPollInterval, ProgressInterval: indexer.DefaultProgressInterval,
			UpstreamPatience: indexer.DefaultUpstreamPatience, MemoryBudget: indexer.DefaultMemoryBudget},
		rpc:  rpcsource.Config{Concurrency: rpcsource.DefaultConcurrency, MaxInFlight: rpcsource.DefaultMaxInFlight},
		http: upstream.Config{Timeout: upstream.DefaultTimeout},
	}
	fs.StringVar(&f.upstream, "upstream", "", "comma-separated URLs, tried in order with failover (required): "+
		"NEAR JSON-RPC nodes for --source rpc, neardata base URLs for neardata, a NEAR Lake directory or base URL for lake; "+
		"a URL's query (?apiKey=KEY) goes with every request and logs show it redacted")
	fs.Var(envflag.Secret(&f.upstreamAPIKey), "upstream-api-key", "API key sent with every request to the --upstream URLs, "+
		"and to no other host, as the header Authorization: Bearer KEY "+
		"(FastNEAR's RPC and neardata take it so; preferred to ?apiKey= in the URL); never shown")
	fs.StringVar(&f.source, "source", f.source, "where blocks come from: rpc (JSON-RPC, many calls per block), "+
		"neardata or lake (one block document per height)")
	fs.StringVar(&f.rpcUpstream, "rpc-upstream", "", "with --source neardata or lake: comma-separated NEAR JSON-RPC URLs "+
		"for the genesis and protocol configs (once per epoch), lake's final head and --snapshot-accounts "+
		"(default: none; then --genesis is required)")
	fs.Var(envflag.Secret(&f.rpcUpstreamKey), "rpc-upstream-api-key", "API key sent with every request to the --rpc-upstream URLs "+
		"as the header Authorization: Bearer KEY (--upstream-api-key never goes there: to send the same key, give it here too); never shown")
	fs.Var(envflag.Height(&f.indexer.From, &f.fromLatest), "from", "first height to index, or latest: the upstream's final head, "+
		"for an archive without history (default: after the cursor, or the genesis height on an empty archive)")
	fs.Var(envflag.Height(&f.indexer.To, nil), "to", "last height to index, then exit (default: follow the head until interrupted)")
	fs.Var(envflag.Number(&f.indexer.Workers, 1, 0), "workers", "blocks fetched at once")
	fs.Var(envflag.Number(&f.rpc.Concurrency, 1, 0), "block-concurrency",
		"upstream calls made at once for one block (chunks, changes, tx statuses)")
	fs.Var(envflag.OrMinusOne(envflag.Number(&f.rpc.MaxInFlight, 1, 0), "no bound"), "upstream-concurrency",
		"upstream calls in flight at most, over all blocks fetched together (-1 for no bound)")
	fs.Var(envflag.Number(&f.indexer.BatchSize, 1, 0), "batch-size", "heights committed per transaction")
	fs.Var(envflag.Duration(&f.http.Timeout, envflag.Above0), "upstream-timeout", "time limit of one upstream request")
	fs.Var(envflag.Duration(&f.indexer.UpstreamPatience, envflag.Above0), "upstream-patience", "with --to, or on an archive's first "+
		"start, how long an unreachable upstream is waited for before the command fails (an archive that has followed before, "+
		"following the head without --to, waits for it as long as it takes)")
	fs.Var(envflag.Duration(&f.indexer.PollInterval, envflag.Above0), "poll-interval",
		"how often the final head is polled when caught up (within a batch of it); further behind, every 30 s")
	fs.Var(envflag.Duration(&f.indexer.ProgressInterval, envflag.Above0), "progress-interval", "how often progress is logged")
	fs.StringVar(&f.metricsListen, "metrics-listen", "", "address to serve Prometheus metrics on at /metrics (default: off)")
	fs.StringVar(&f.genesis, "genesis", "", "nearcore genesis.json whose records are the state at the genesis height")
	fs.StringVar(&f.snapshot, "snapshot-accounts", "",
		"comma-separated accounts whose state at --from is fetched as the start of their history")
	fs.Var(envflag.Number(&f.maxConns, 1, 0), "db-max-conns", dbMaxConnsHelp)
	fs.Var(envflag.Bool(&f.events), "events", "write the explorer tables (ft_events, nft_events, mt_events, account_activity) "+
		"with every block; false skips them")
	fs.StringVar(&f.cursor, "cursor", f.cursor, "the indexer_cursor row (range) this indexer advances: several indexers "+
		"with their own --cursor and --from/--to fill disjoint ranges of one archive")
	fs.Var(envflag.Size(&f.indexer.MemoryBudget), "memory-budget", "bytes of blocks the pipeline holds at once "+
		"(fetched, decoded, prepared, being written), e.g. 192MiB or 1GiB: batches are cut short to stay within it, "+
		"whatever the blocks weigh; the Go runtime's memory limit is 2.5 times it unless GOMEMLIMIT is set, its collector then at GOGC=200 unless GOGC is set")
	fs.Var(envflag.Number(&f.http.RequestRate, 0, 0), "upstream-rate", "with --source neardata or lake: requests a second "+
		"to the document upstream at most, retries included (0: no bound; a free neardata endpoint allows 3: 180 a minute per IP)")
	fs.Var(envflag.Bool(&f.noMigrate), "no-migrate", "do not apply the migrations at start: refuse to start on a database "+
		"whose schema is behind this binary's (apply them with nearline migrate, after a backup; docs/database.md)")
	return f
}

// dbMaxConnsHelp is --db-max-conns' help in every command that has it.
const dbMaxConnsHelp = "PostgreSQL pool size"

// Values of --source.
const (
	sourceRPC      = "rpc"
	sourceNeardata = "neardata"
	sourceLake     = "lake"
)

// check refuses, before anything connects anywhere, what cannot work: a
// missing or malformed upstream, a --source combination, a --cursor name,
// a reversed range, a --genesis that is not there, an address that is not
// host:port. Each error names the flag or variable the value came from.
func (f *indexFlags) check() error {
	if err := f.db.check(); err != nil {
		return err
	}
	if f.upstream == "" {
		return errors.New("--upstream (or NEARLINE_UPSTREAM) is required")
	}
	if err := store.ValidCursorName(f.cursor); err != nil {
		return fmt.Errorf("%s: %w", f.env.flags().Origin(f.fs, "cursor"), err)
	}
	switch f.source {
	case sourceRPC:
		if f.rpcUpstream != "" {
			return errors.New("--rpc-upstream is for --source neardata or lake; with --source rpc, --upstream is the RPC node")
		}
	case sourceNeardata, sourceLake:
		if f.rpcUpstream == "" && f.genesis == "" {
			return fmt.Errorf("--source %s needs --rpc-upstream (configs) or --genesis (the genesis config, no protocol configs)", f.source)
		}
		if f.source == sourceLake && f.rpcUpstream == "" && httpcall.IsHTTP(f.upstream) {
			return errors.New("--source lake over HTTP needs --rpc-upstream for the final head")
		}
	default:
		return fmt.Errorf("%s: want rpc, neardata or lake", f.env.flags().Origin(f.fs, "source"))
	}
	if f.source != sourceLake || httpcall.IsHTTP(f.upstream) {
		if err := f.env.flags().CheckURLs(f.fs, "upstream"); err != nil {
			return err
		}
	}
	if err := f.env.flags().CheckURLs(f.fs, "rpc-upstream"); err != nil {
		return err
	}
	if err := f.checkKeys(); err != nil {
		return err
	}
	envflag.WarnInClear(f.fs, "upstream", f.upstreamAPIKey != "", f.env.logger)
	envflag.WarnInClear(f.fs, "rpc-upstream", f.rpcUpstreamKey != "", f.env.logger)
	if from, to := f.indexer.From, f.indexer.To; from != nil && to != nil && *from > *to {
		return fmt.Errorf("--from %d is above --to %d", *from, *to)
	}
	if err := f.env.flags().CheckAddress(f.fs, "metrics-listen"); err != nil {
		return err
	}
	if f.genesis != "" {
		if _, err := os.Stat(f.genesis); err != nil {
			return fmt.Errorf("%s: %w", f.env.flags().Origin(f.fs, "genesis"), errors.Unwrap(err))
		}
	}
	if envflag.Split(f.snapshot) != nil {
		if f.indexer.From == nil && !f.fromLatest {
			return errors.New("--snapshot-accounts needs --from: the height the snapshot is taken at")
		}
		if f.source != sourceRPC && f.rpcUpstream == "" {
			return errors.New("--snapshot-accounts with a document source needs --rpc-upstream")
		}
	}
	return nil
}

// checkKeys refuses an API key that no header can hold, or that has no
// URL of its own flag to go to, naming the flag or variable, never the
// key.
func (f *indexFlags) checkKeys() error {
	for _, k := range []struct{ name, key string }{
		{"upstream-api-key", f.upstreamAPIKey}, {"rpc-upstream-api-key", f.rpcUpstreamKey},
	} {
		if err := httpcall.CheckBearer(k.key); err != nil {
			return fmt.Errorf("%s: %w", f.env.flags().SecretOrigin(f.fs, k.name), err)
		}
	}
	if f.upstreamAPIKey != "" && !httpcall.IsHTTP(f.upstream) {
		return fmt.Errorf("%s is for an HTTP --upstream; a lake directory takes none", f.env.flags().SecretOrigin(f.fs, "upstream-api-key"))
	}
	if f.rpcUpstreamKey != "" && f.rpcUpstream == "" {
		return fmt.Errorf("%s is for --rpc-upstream, which is not set (with --source rpc, the node's key is --upstream-api-key)", f.env.flags().SecretOrigin(f.fs, "rpc-upstream-api-key"))
	}
	return nil
}

// rpcEndpoints are the JSON-RPC upstreams and their API key: --upstream
// with --upstream-api-key for --source rpc, else --rpc-upstream with
// --rpc-upstream-api-key (none without --rpc-upstream). A key goes to the
// URLs of its own flag only.
func (f *indexFlags) rpcEndpoints() (urls []string, apiKey string) {
	if f.source == sourceRPC {
		return envflag.Split(f.upstream), f.upstreamAPIKey
	}
	return envflag.Split(f.rpcUpstream), f.rpcUpstreamKey
}

// forwardTo is the RPC node the server forwards what the archive cannot
// answer to, and its API key: the first RPC upstream, none for a document
// source without --rpc-upstream.
func (f *indexFlags) forwardTo() (url, apiKey string) {
	urls, apiKey := f.rpcEndpoints()
	if len(urls) == 0 {
		return "", ""
	}
	return urls[0], apiKey
}
