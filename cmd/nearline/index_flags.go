package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/httpcall"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/upstream"
)

// indexPoolSize is the indexer's default PostgreSQL pool size: a commit
// holds one connection; the rest serve genesis loads, snapshots and the
// tx-status revisits between commits.
const indexPoolSize = 8

// retiredRequestTimeout is what NEARLINE_REQUEST_TIMEOUT, which meant the
// upstream's request limit to index and the server's to serve, is now.
const retiredRequestTimeout = "NEARLINE_REQUEST_TIMEOUT"

// memoryLimitPerBudget is, in halves, the Go runtime's soft memory limit
// per byte of --memory-budget when GOMEMLIMIT sets none: 2.5 times the
// budget, room for the blocks it bounds, the documents read ahead for
// transaction statuses, the server and the runtime.
const memoryLimitPerBudget = 5

// indexFlags are the flags of `nearline index`; `nearline run` registers
// them too (registerIndexFlags) and calls indexWith.
type indexFlags struct {
	fs  *flag.FlagSet
	env *environment

	db               *databaseFlags
	upstream         *string
	upstreamAPIKey   *string
	source           *string
	rpcUpstream      *string
	rpcUpstreamKey   *string
	from, to         **uint64
	fromLatest       bool
	workers          *int
	blockConcurrency *int
	upstreamInFlight *int
	batchSize        *int
	upstreamTimeout  *time.Duration
	upstreamPatience *time.Duration
	pollInterval     *time.Duration
	progressInterval *time.Duration
	metricsListen    *string
	genesis          *string
	snapshotAccounts *string
	maxConns         *int
	events           *bool
	cursor           *string
	memoryBudget     *int64
	upstreamRate     *float64
}

func registerIndexFlags(fs *flag.FlagSet, env *environment) *indexFlags {
	f := &indexFlags{fs: fs, env: env, db: registerDatabaseFlags(fs, env)}
	f.upstream = stringFlag(fs, env, "upstream", "NEARLINE_UPSTREAM", "", "comma-separated URLs, tried in order with failover (required): NEAR JSON-RPC nodes for --source rpc, neardata base URLs for neardata, a NEAR Lake directory or base URL for lake; a URL's query (?apiKey=KEY) goes with every request and logs show it redacted")
	f.upstreamAPIKey = secretFlag(fs, env, "upstream-api-key", "NEARLINE_UPSTREAM_API_KEY", "API key sent with every request to the --upstream URLs, and to no other host, as the header Authorization: Bearer KEY (FastNEAR's RPC and neardata take it so; preferred to ?apiKey= in the URL); never shown")
	f.source = stringFlag(fs, env, "source", "NEARLINE_SOURCE", sourceRPC, "where blocks come from: rpc (JSON-RPC, many calls per block), neardata or lake (one block document per height)")
	f.rpcUpstream = stringFlag(fs, env, "rpc-upstream", "NEARLINE_RPC_UPSTREAM", "", "with --source neardata or lake: comma-separated NEAR JSON-RPC URLs for the genesis and protocol configs (once per epoch), lake's final head and --snapshot-accounts (default: none; then --genesis is required)")
	f.rpcUpstreamKey = secretFlag(fs, env, "rpc-upstream-api-key", "NEARLINE_RPC_UPSTREAM_API_KEY", "API key sent with every request to the --rpc-upstream URLs as the header Authorization: Bearer KEY (--upstream-api-key never goes there: to send the same key, give it here too); never shown")
	f.from = heightFlag(fs, env, "from", "NEARLINE_FROM", &f.fromLatest, "first height to index, or latest: the upstream's final head, for an archive without history (default: after the cursor, or the genesis height on an empty archive)")
	f.to = heightFlag(fs, env, "to", "NEARLINE_TO", nil, "last height to index, then exit (default: follow the head until interrupted)")
	f.workers = intFlag(fs, env, "workers", "NEARLINE_WORKERS", indexer.DefaultWorkers, positive, "blocks fetched at once")
	f.blockConcurrency = intFlag(fs, env, "block-concurrency", "NEARLINE_BLOCK_CONCURRENCY", rpcsource.DefaultConcurrency, positive, "upstream calls made at once for one block (chunks, changes, tx statuses)")
	f.upstreamInFlight = intFlag(fs, env, "upstream-concurrency", "NEARLINE_UPSTREAM_CONCURRENCY", rpcsource.DefaultMaxInFlight, positive.orMinusOne("no bound"), "upstream calls in flight at most, over all blocks fetched together (-1 for no bound)")
	f.batchSize = intFlag(fs, env, "batch-size", "NEARLINE_BATCH_SIZE", indexer.DefaultBatchSize, positive, "heights committed per transaction")
	f.upstreamTimeout = durationFlag(fs, env, "upstream-timeout", "NEARLINE_UPSTREAM_TIMEOUT", upstream.DefaultTimeout, positiveDuration, "time limit of one upstream request")
	alias(fs, "request-timeout", "upstream-timeout")
	retiredEnv(fs, env, "upstream-timeout", retiredRequestTimeout)
	f.upstreamPatience = durationFlag(fs, env, "upstream-patience", "NEARLINE_UPSTREAM_PATIENCE", indexer.DefaultUpstreamPatience, positiveDuration, "with --to, how long an unreachable upstream is waited for before the run fails (following the head, without --to, it is waited for as long as it takes)")
	f.pollInterval = durationFlag(fs, env, "poll-interval", "NEARLINE_POLL_INTERVAL", indexer.DefaultPollInterval, positiveDuration, "how often the final head is polled when caught up (within a batch of it); further behind, every 30 s")
	f.progressInterval = durationFlag(fs, env, "progress-interval", "NEARLINE_PROGRESS_INTERVAL", indexer.DefaultProgressInterval, positiveDuration, "how often progress is logged")
	f.metricsListen = stringFlag(fs, env, "metrics-listen", "NEARLINE_METRICS_LISTEN", "", "address to serve Prometheus metrics on at /metrics (default: off)")
	f.genesis = stringFlag(fs, env, "genesis", "NEARLINE_GENESIS", "", "nearcore genesis.json whose records are the state at the genesis height")
	f.snapshotAccounts = stringFlag(fs, env, "snapshot-accounts", "NEARLINE_SNAPSHOT_ACCOUNTS", "", "comma-separated accounts whose state at --from is fetched as the start of their history")
	f.maxConns = intFlag(fs, env, "db-max-conns", "NEARLINE_DB_MAX_CONNS", indexPoolSize, positive, dbMaxConnsHelp)
	f.events = boolFlag(fs, env, "events", "NEARLINE_EVENTS", true, "write the explorer tables (ft_events, nft_events, mt_events, account_activity) with every block; false skips them")
	f.cursor = stringFlag(fs, env, "cursor", "NEARLINE_CURSOR", store.DefaultCursor, "the indexer_cursor row (range) this indexer advances: several indexers with their own --cursor and --from/--to fill disjoint ranges of one archive")
	f.memoryBudget = bytesFlag(fs, env, "memory-budget", "NEARLINE_MEMORY_BUDGET", indexer.DefaultMemoryBudget, "bytes of blocks the pipeline holds at once (fetched, decoded, prepared, being written), e.g. 192MiB or 1GiB: batches are cut short to stay within it, whatever the blocks weigh; the Go runtime's memory limit is 2.5 times it unless GOMEMLIMIT is set")
	f.upstreamRate = rateFlag(fs, env, "upstream-rate", "NEARLINE_UPSTREAM_RATE", 0, "with --source neardata or lake: requests a second to the document upstream at most, retries included (0: no bound; a free neardata endpoint allows 3: 180 a minute per IP)")
	return f
}

// dbMaxConnsHelp is --db-max-conns' help in every command that has it.
const dbMaxConnsHelp = "PostgreSQL pool size"

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

// check refuses, before anything connects anywhere, what cannot work: a
// missing or malformed upstream, a --source combination, a --cursor name,
// a reversed range, a --genesis that is not there, an address that is not
// host:port. Each error names the flag or variable the value came from.
func (f *indexFlags) check() error {
	if err := f.db.check(); err != nil {
		return err
	}
	if *f.upstream == "" {
		return errors.New("--upstream (or NEARLINE_UPSTREAM) is required")
	}
	if err := store.ValidCursorName(*f.cursor); err != nil {
		return fmt.Errorf("%s: %w", origin(f.fs, f.env, "cursor"), err)
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
		if *f.source == sourceLake && *f.rpcUpstream == "" && httpcall.IsHTTP(*f.upstream) {
			return errors.New("--source lake over HTTP needs --rpc-upstream for the final head")
		}
	default:
		return fmt.Errorf("%s: want rpc, neardata or lake", origin(f.fs, f.env, "source"))
	}
	if *f.source != sourceLake || httpcall.IsHTTP(*f.upstream) {
		if err := checkURLs(f.fs, f.env, "upstream"); err != nil {
			return err
		}
	}
	if err := checkURLs(f.fs, f.env, "rpc-upstream"); err != nil {
		return err
	}
	if err := f.checkKeys(); err != nil {
		return err
	}
	warnInClear(f.fs, f.env, "upstream", *f.upstreamAPIKey != "")
	warnInClear(f.fs, f.env, "rpc-upstream", *f.rpcUpstreamKey != "")
	if from, to := *f.from, *f.to; from != nil && to != nil && *from > *to {
		return fmt.Errorf("--from %d is above --to %d", *from, *to)
	}
	if err := checkAddress(f.fs, f.env, "metrics-listen"); err != nil {
		return err
	}
	if *f.genesis != "" {
		if _, err := os.Stat(*f.genesis); err != nil {
			return fmt.Errorf("%s: %w", origin(f.fs, f.env, "genesis"), errors.Unwrap(err))
		}
	}
	if splitList(*f.snapshotAccounts) != nil {
		if *f.from == nil && !f.fromLatest {
			return errors.New("--snapshot-accounts needs --from: the height the snapshot is taken at")
		}
		if *f.source != sourceRPC && *f.rpcUpstream == "" {
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
		{"upstream-api-key", *f.upstreamAPIKey}, {"rpc-upstream-api-key", *f.rpcUpstreamKey},
	} {
		if err := httpcall.CheckBearer(k.key); err != nil {
			return fmt.Errorf("%s: %w", secretOrigin(f.fs, f.env, k.name), err)
		}
	}
	if *f.upstreamAPIKey != "" && !httpcall.IsHTTP(*f.upstream) {
		return fmt.Errorf("%s is for an HTTP --upstream; a lake directory takes none", secretOrigin(f.fs, f.env, "upstream-api-key"))
	}
	if *f.rpcUpstreamKey != "" && *f.rpcUpstream == "" {
		return fmt.Errorf("%s is for --rpc-upstream, which is not set (with --source rpc, the node's key is --upstream-api-key)", secretOrigin(f.fs, f.env, "rpc-upstream-api-key"))
	}
	return nil
}

// checkURLs refuses a comma-separated list of the flag name that holds
// something other than absolute http(s) URLs (which may have a query: an
// API key), naming them redacted.
func checkURLs(fs *flag.FlagSet, env *environment, name string) error {
	for _, s := range splitList(fs.Lookup(name).Value.String()) {
		if _, ok := httpcall.ParseHTTP(s); !ok {
			return fmt.Errorf("%s: %q is not an http:// or https:// URL", originShown(fs, env, name, shownURLs), httpcall.RedactURL(s))
		}
	}
	return nil
}

// warnInClear logs a warning for each URL of the flag name that would
// carry a secret unencrypted (httpcall.InClear): its own query or
// password, or, when bearer is set, the flag's API key. The URL is shown
// redacted.
func warnInClear(fs *flag.FlagSet, env *environment, name string, bearer bool) {
	for _, u := range splitList(fs.Lookup(name).Value.String()) {
		if httpcall.InClear(u, bearer) {
			env.logger.Warn("an API key or password goes unencrypted over http://; use https://", "flag", "--"+name, "url", httpcall.RedactURL(u))
		}
	}
}

// shownURLs is a comma-separated list of URLs as messages and logs show
// it: each redacted (httpcall.RedactURL), so that no API key or password
// appears.
func shownURLs(list string) string {
	urls := splitList(list)
	for i, u := range urls {
		urls[i] = httpcall.RedactURL(u)
	}
	return strings.Join(urls, ",")
}

// checkAddress refuses a listen address of the flag name that is not
// host:port (empty passes: off).
func checkAddress(fs *flag.FlagSet, env *environment, name string) error {
	addr := fs.Lookup(name).Value.String()
	if addr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%s: want host:port, such as 127.0.0.1:3030 or :3030", origin(fs, env, name))
	}
	return nil
}

// rpcEndpoints are the JSON-RPC upstreams and their API key: --upstream
// with --upstream-api-key for --source rpc, else --rpc-upstream with
// --rpc-upstream-api-key (none without --rpc-upstream). A key goes to the
// URLs of its own flag only.
func (f *indexFlags) rpcEndpoints() (urls []string, apiKey string) {
	if *f.source == sourceRPC {
		return splitList(*f.upstream), *f.upstreamAPIKey
	}
	return splitList(*f.rpcUpstream), *f.rpcUpstreamKey
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
