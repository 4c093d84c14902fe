package rpcserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/nearline/nearline/nearvm"
	"github.com/nearline/nearline/store"
)

// ServeConfig configures Serve. Zero fields take the defaults documented on
// them; DatabaseURL is required by Serve (not by ServeStore).
type ServeConfig struct {
	// DatabaseURL is the archive's PostgreSQL URL.
	DatabaseURL string
	// Listen is the TCP address to listen on. Default "127.0.0.1:3030".
	Listen string
	// Handler holds the protocol layer's limits, API keys and upstream.
	// When Handler.Metrics is nil, ServeStore creates metrics on a new
	// registry with the Go and process collectors (served at GET /metrics,
	// as nearcore's RPC port); `nearline run` passes metrics on the
	// indexer's registry instead.
	Handler Config
	// Archive tunes the archive Backend (view_state limit, ...).
	Archive ArchiveConfig
	// VM configures the contract runtime of call_function.
	VM nearvm.Config
	// MaxConns is the database pool size. Default 20.
	MaxConns int32
	// StatementTimeout bounds every SQL statement. Default 30s.
	StatementTimeout time.Duration
	// ShutdownTimeout is how long in-flight requests may take to finish
	// once ctx is cancelled. Default 10s.
	ShutdownTimeout time.Duration
	// Logger receives the server's logs. Default: discard.
	Logger *slog.Logger
	// Ready, when set, is called with the listening address once the server
	// accepts connections.
	Ready func(addr net.Addr)
}

// DefaultListen is where `nearline serve` listens by default, as nearcore.
const DefaultListen = "127.0.0.1:3030"

func (c ServeConfig) withDefaults() ServeConfig {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.MaxConns == 0 {
		c.MaxConns = 20
	}
	if c.StatementTimeout == 0 {
		c.StatementTimeout = 30 * time.Second
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c ServeConfig) validate() error {
	if c.MaxConns < 1 {
		return fmt.Errorf("max conns %d: want at least 1", c.MaxConns)
	}
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("shutdown timeout %s is negative", c.ShutdownTimeout)
	}
	return c.Handler.Validate()
}

// Serve opens the archive at cfg.DatabaseURL and answers JSON-RPC on
// cfg.Listen until ctx is cancelled; then it stops accepting, lets
// in-flight requests finish within ShutdownTimeout and returns nil.
func Serve(ctx context.Context, cfg ServeConfig) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.DatabaseURL == "" {
		return errors.New("serve: a database url is required")
	}
	st, err := store.Open(ctx, cfg.DatabaseURL, store.Config{
		MaxConns:         cfg.MaxConns,
		ApplicationName:  "nearline-serve",
		StatementTimeout: cfg.StatementTimeout,
		Logger:           cfg.Logger,
	})
	if err != nil {
		return fmt.Errorf("open archive: %w", err)
	}
	defer st.Close()
	return ServeStore(ctx, st, cfg)
}

// ServeStore is Serve over an already open store (`nearline run` shares
// one pool between the indexer and the server). cfg.DatabaseURL is unused.
func ServeStore(ctx context.Context, st ArchiveStore, cfg ServeConfig) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	logger := cfg.Logger
	vmCfg := cfg.VM
	if vmCfg.Logger == nil {
		vmCfg.Logger = logger
	}
	vm, err := nearvm.New(ctx, vmCfg)
	if err != nil {
		return fmt.Errorf("start contract runtime: %w", err)
	}
	defer vm.Close(context.WithoutCancel(ctx))

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	archiveCfg := cfg.Archive
	if archiveCfg.RPCAddr == "" {
		archiveCfg.RPCAddr = ln.Addr().String()
	}
	backend := NewArchive(st, vm, archiveCfg, logger)
	if cfg.Handler.Metrics == nil {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		if cfg.Handler.Metrics, err = NewMetrics(reg); err != nil {
			return err
		}
	}
	// Reading a request and writing its answer get the request timeout plus
	// a margin, so a slow client cannot hold a connection forever.
	requestTimeout := cfg.Handler.withDefaults().RequestTimeout
	srv := &http.Server{
		Handler:           NewHandler(backend, cfg.Handler, logger),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       requestTimeout + 30*time.Second,
		WriteTimeout:      2*requestTimeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logger.Info("serving JSON-RPC", "addr", ln.Addr().String())
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr())
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down JSON-RPC server", "timeout", cfg.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Warn("in-flight requests did not finish in time; closing their connections", "err", err)
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve http: %w", err)
	}
	return nil
}
