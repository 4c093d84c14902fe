package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nearline/nearline/archive"
	"github.com/nearline/nearline/internal/buildinfo"
	"github.com/nearline/nearline/internal/metrics"
	"github.com/nearline/nearline/internal/outage"
	"github.com/nearline/nearline/nearvm"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/store"

	"github.com/nearline/nearline/internal/envflag"
)

// servePoolSize is the server's default PostgreSQL pool size (for `run`, the
// connections it adds to the indexer's pool).
const servePoolSize = 20

// serveFlags are the flags of `nearline serve`. `nearline run` registers
// them too (registerServeFlags with forRun) next to the index flags, which
// already provide --database-url and the upstream, and calls settings.
type serveFlags struct {
	fs  *flag.FlagSet
	env *environment

	db                            *databaseFlags // nil for run
	forward, apiKeys, corsOrigins string
	maxConns                      int
	serveSettings
}

// viewStateLimitHelp is --view-state-limit's help in every command that
// has it: one meaning, one variable.
const viewStateLimitHelp = "view_state limit in bytes of contract state, as a regular node's (-1 = no limit)"

func registerServeFlags(fs *flag.FlagSet, env *environment, forRun bool) *serveFlags {
	f := &serveFlags{fs: fs, env: env, corsOrigins: "*", maxConns: servePoolSize, serveSettings: serveSettings{
		listen: rpcserve.DefaultListen,
		handler: rpcserve.Config{MaxBodyBytes: rpcserve.DefaultMaxBodyBytes, MaxBodyMemory: rpcserve.DefaultMaxBodyMemory,
			MaxBatch: rpcserve.DefaultMaxBatch, MaxListItems: rpcserve.DefaultMaxListItems, MaxForwards: rpcserve.DefaultMaxForwards,
			MaxResponseBytes: rpcserve.DefaultMaxResponseBytes, RequestTimeout: rpcserve.DefaultRequestTimeout,
			MaxConcurrent: rpcserve.DefaultMaxConcurrent},
		archive: archive.Config{ViewStateLimit: archive.DefaultViewStateLimit},
		server: rpcserve.ServeConfig{ShutdownTimeout: rpcserve.DefaultShutdownTimeout, DrainTime: rpcserve.DefaultDrainTime,
			MaxConnections: rpcserve.DefaultMaxConnections, MaxConnectionsPerClient: rpcserve.DefaultMaxConnectionsPerClient},
	}}
	// The index flags own --request-timeout and --db-max-conns in run.
	timeoutName, connsName, connsUsage := "request-timeout", "db-max-conns", dbMaxConnsHelp
	if forRun {
		timeoutName, connsName = "rpc-request-timeout", "rpc-db-max-conns"
		connsUsage = "PostgreSQL connections the server adds to the pool it shares with the indexer"
	} else {
		f.db = registerDatabaseFlags(fs)
		fs.StringVar(&f.forward, "forward-url", "", "NEAR JSON-RPC URL to forward what the archive cannot answer to "+
			"(send_tx, blocks before the archive, validators, ...)")
	}
	h, srv := &f.handler, &f.server
	fs.StringVar(&f.listen, "listen", f.listen, "address to answer JSON-RPC on")
	fs.Var(envflag.Secret(&f.apiKeys), "api-keys", "comma-separated API keys; when set, requests must use /<api-key>/...; never shown")
	fs.StringVar(&f.corsOrigins, "cors-origins", f.corsOrigins, "comma-separated origins browsers may call from (* for any)")
	fs.Var(envflag.OrMinusOne(envflag.Number(&f.archive.ViewStateLimit, 1, 0), "no limit"), "view-state-limit", viewStateLimitHelp)
	fs.Var(envflag.Number(&h.MaxBodyBytes, 1, 0), "max-body-bytes", "largest request body accepted")
	fs.Var(envflag.Number(&h.MaxBodyMemory, 1, 0), "max-body-memory", "most bytes of request bodies and answers above 64 KiB "+
		"held at once, reserved as a body's bytes arrive; with no room, HTTP 503 after the queue wait (at least --max-body-bytes)")
	fs.Var(envflag.Number(&h.MaxBatch, 1, 0), "max-batch", "most requests in one batch")
	fs.Var(envflag.Number(&h.MaxListItems, 1, 0), "max-list-items", "most items of any list in a request's params "+
		"(account_ids and keys of the changes methods); a longer one is a PARSE_ERROR")
	fs.Var(envflag.Number(&h.MaxResponseBytes, 1, 0), "max-response-bytes", "most bytes of answers one batch gets; once its answers "+
		"exceed it, the rest of the batch is refused with an error (a single request is not capped)")
	fs.Var(envflag.Duration(&h.RequestTimeout, envflag.Above0), timeoutName, "time limit of one HTTP request to the server")
	fs.Var(envflag.Number(&h.MaxConcurrent, 1, 0), "max-concurrent", "most HTTP requests handled at once")
	fs.Var(envflag.Number(&srv.MaxConnections, 1, 0), "max-connections", "most client connections open at once; at the cap "+
		"the connection idle longest is closed, and when none is idle new ones wait in the listen queue")
	fs.Var(envflag.Number(&srv.MaxConnectionsPerClient, 1, 0), "max-connections-per-client", "most connections open at once "+
		"from one IP address; beyond it that client's idlest connection is closed, or the new one when none is idle "+
		"(behind a proxy, raise it to --max-connections)")
	fs.Var(envflag.Number(&h.MaxForwards, 1, 0), "max-forwards",
		"most calls forwarded upstream at once, and most calls one request (a batch) forwards")
	fs.Var(envflag.Duration(&srv.ShutdownTimeout, envflag.Above0), "shutdown-timeout", "time in-flight requests get to finish on shutdown")
	fs.Var(envflag.Duration(&srv.DrainTime, envflag.OrNegative), "drain-time", "on shutdown, how long new requests get a 503 with an "+
		"error envelope before the port closes, so that queued connections get an answer rather than a reset (negative: close at once)")
	fs.Var(envflag.Number(&f.maxConns, 1, 0), connsName, connsUsage)
	fs.Var(envflag.Duration(&f.archive.HealthMaxLag, envflag.OrZero), "health-max-lag", "health fails (NO_NEW_BLOCKS) when the latest "+
		"indexed block is older than this, or when the database is a replica whose replay trails its primary by more than this (0 = off)")
	return f
}

// check refuses, before anything connects, a listen address that is not
// host:port and a forward URL that is not http(s).
func (f *serveFlags) check() error {
	if f.db != nil {
		if err := f.db.check(); err != nil {
			return err
		}
		if err := f.env.flags().CheckURLs(f.fs, "forward-url"); err != nil {
			return err
		}
		envflag.WarnInClear(f.fs, "forward-url", false, f.env.logger)
	}
	return f.env.flags().CheckAddress(f.fs, "listen")
}

// serveSettings are the server's parts as the flags configure them.
type serveSettings struct {
	listen  string
	handler rpcserve.Config
	archive archive.Config
	server  rpcserve.ServeConfig
	// upstream, in `run`, is the indexer's upstream: /health fails while
	// it is cut off.
	upstream *outage.Tracker
}

// settings completes and checks (by their Validate) the server's configs:
// it forwards to forward, from the flags themselves for `serve`, from the
// index flags for `run`, with its API key (none: "") sent as a bearer
// token.
func (f *serveFlags) settings(forward, forwardKey string) (serveSettings, error) {
	apiKeys := envflag.Split(f.apiKeys)
	if strings.TrimSpace(f.apiKeys) != "" && len(apiKeys) == 0 {
		// Blank entries are dropped; a list of nothing but blanks would
		// start the server open, which is not what setting it asked for.
		return serveSettings{}, fmt.Errorf("%s holds no key: give at least one non-blank key, or leave it unset for an open server", f.env.flags().SecretOrigin(f.fs, "api-keys"))
	}
	s := f.serveSettings
	s.handler.APIKeys, s.handler.CORSOrigins = apiKeys, envflag.Split(f.corsOrigins)
	s.handler.Forward, s.handler.ForwardBearerToken = forward, forwardKey
	s.server.RequestTimeout, s.archive.Commit = s.handler.RequestTimeout, buildinfo.Read(commit).Commit
	if err := s.handler.Validate(); err != nil {
		return serveSettings{}, err
	}
	if err := s.archive.Validate(); err != nil {
		return serveSettings{}, err
	}
	if err := s.server.Validate(); err != nil {
		return serveSettings{}, err
	}
	return s, nil
}

// serveStoreConfig is how `nearline serve` opens the archive: read-only
// sessions (it never writes; the role it connects as should be the
// read-only role of docs/database.md too), named, with a 30 s statement
// timeout.
func serveStoreConfig(maxConns int) store.Config {
	return store.Config{
		MaxConns:         int32(maxConns),
		ApplicationName:  "nearline-serve",
		StatementTimeout: 30 * time.Second,
		ReadOnly:         true,
	}
}

// runServe answers NEAR JSON-RPC read methods from the archive until ctx
// ends, then finishes in-flight requests and returns nil.
func runServe(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "serve", "[--database-url URL | --data-dir DIR] [--listen ADDR] [--forward-url URL] [flags]")
	flags := registerServeFlags(fs, env, false)
	var settings serveSettings
	err := env.flags().Parse(fs, args, flags.check, func() (err error) {
		settings, err = flags.settings(flags.forward, "")
		return err
	})
	if err != nil {
		return err
	}
	if flags.forward == "" && env.getenv("NEARLINE_UPSTREAM") != "" {
		env.logger.Warn("NEARLINE_UPSTREAM is the block source of index and run; serve forwards to --forward-url (NEARLINE_FORWARD_URL), which is not set")
	}
	st, closeStore, err := flags.db.openStore(ctx, env, archiveUse{cfg: serveStoreConfig(flags.maxConns)})
	if err != nil {
		return err
	}
	defer closeStore()
	// GET /metrics on the RPC port, as nearcore's: the server's metrics and
	// the Go runtime's.
	return serveArchive(ctx, env, st, settings, metrics.NewRegistry())
}

// serveArchive answers JSON-RPC from the archive in st until ctx ends: it
// starts the contract runtime of call_function, listens, and serves the
// archive backend through rpcserve, its metrics and the replica lag of the
// database (a sample only on a replica) registered on reg (and served at
// GET /metrics).
func serveArchive(ctx context.Context, env *environment, st archive.Store, s serveSettings, reg *prometheus.Registry) error {
	vm, err := nearvm.New(ctx, nearvm.Config{}, env.logger)
	if err != nil {
		return fmt.Errorf("start contract runtime: %w", err)
	}
	defer vm.Close(context.WithoutCancel(ctx))
	if s.handler.Metrics, err = rpcserve.NewMetrics(reg); err != nil {
		return err
	}
	if err := reg.Register(archive.NewReplicaLagCollector(st, archive.DefaultReplicaLagTimeout, env.logger)); err != nil {
		return fmt.Errorf("register replica lag metric: %w", err)
	}
	ln, err := net.Listen("tcp", s.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.listen, err)
	}
	s.archive.RPCAddr = ln.Addr().String()
	archived, err := archive.New(st, vm, s.archive, env.logger)
	if err != nil {
		_ = ln.Close()
		return err
	}
	var backend rpcserve.Backend = archived
	if s.upstream != nil {
		backend = archive.WithUpstream(backend, s.upstream)
	}
	handler, err := rpcserve.NewHandler(backend, s.handler, env.logger)
	if err != nil {
		_ = ln.Close()
		return err
	}
	return rpcserve.Serve(ctx, ln, handler, s.server, env.logger)
}
