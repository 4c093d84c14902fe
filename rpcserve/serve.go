package rpcserve

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/near"
)

// ServeConfig configures Serve. Zero fields take the defaults documented on
// them.
type ServeConfig struct {
	// RequestTimeout is the handler's time limit of one request
	// (Config.RequestTimeout). The server gives reading a request and
	// writing its answer this plus a margin, so a slow client cannot hold
	// a connection forever. Default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// ShutdownTimeout is how long in-flight requests may take to finish
	// once ctx is cancelled. Default DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// DrainTime is how long the server keeps accepting connections once
	// ctx is cancelled, answering each new request with a 503 and NEAR's
	// error envelope (and Connection: close) instead of running it. A
	// connection the kernel had already queued when the signal came thus
	// gets an answer, not the reset that closing the listener at once
	// would give it. Default DefaultDrainTime; a negative duration closes
	// the listener at once.
	DrainTime time.Duration
	// MaxConnections caps the connections open at once. At the cap, the
	// connection quiet longest (idle between requests, or silent for a
	// second since it was accepted) is closed to make room; when every
	// connection is busy, new ones wait in the listen queue until one
	// closes. Each open connection holds its headers (at most
	// MaxHeaderBytes), and a body of up to SmallBodyBytes while it is read.
	// Default DefaultMaxConnections.
	MaxConnections int
	// MaxConnectionsPerClient caps the connections open at once from one
	// IP address: a new one beyond it closes that client's quietest
	// connection, or, when all of them are busy, is closed at once. Behind
	// a reverse proxy every client is the proxy's address: raise it to
	// MaxConnections there. Default DefaultMaxConnectionsPerClient.
	MaxConnectionsPerClient int
}

// DefaultListen is where `nearline serve` listens by default, as nearcore.
const DefaultListen = "127.0.0.1:3030"

// DefaultShutdownTimeout is ServeConfig.ShutdownTimeout's default.
const DefaultShutdownTimeout = 10 * time.Second

// DefaultDrainTime is ServeConfig.DrainTime's default.
const DefaultDrainTime = 250 * time.Millisecond

// DefaultMaxConnections is ServeConfig.MaxConnections's default.
const DefaultMaxConnections = 1024

// DefaultMaxConnectionsPerClient is ServeConfig.MaxConnectionsPerClient's
// default: a quarter of DefaultMaxConnections.
const DefaultMaxConnectionsPerClient = 256

// MaxHeaderBytes caps a request's line and headers (the http.Server adds
// 4 KiB of slack); more is answered 431 and the connection closed. Go's
// default, 1 MiB, let each connection hold ~10 MiB while its headers were
// parsed.
const MaxHeaderBytes = 16 << 10

func (c ServeConfig) withDefaults() ServeConfig {
	c.RequestTimeout = cmp.Or(c.RequestTimeout, DefaultRequestTimeout)
	c.ShutdownTimeout = cmp.Or(c.ShutdownTimeout, DefaultShutdownTimeout)
	c.DrainTime = cmp.Or(c.DrainTime, DefaultDrainTime)
	c.MaxConnections = cmp.Or(c.MaxConnections, DefaultMaxConnections)
	c.MaxConnectionsPerClient = cmp.Or(c.MaxConnectionsPerClient, min(DefaultMaxConnectionsPerClient, c.MaxConnections))
	return c
}

// Validate reports whether c (after defaults) is usable; Serve returns the
// same error.
func (c ServeConfig) Validate() error { return c.withDefaults().validate() }

func (c ServeConfig) validate() error {
	return errors.Join(
		negative("request timeout", c.RequestTimeout),
		negative("shutdown timeout", c.ShutdownTimeout),
		negative("max connections", c.MaxConnections),
		negative("max connections per client", c.MaxConnectionsPerClient),
	)
}

// Serve answers HTTP on ln with h (a NewHandler) until ctx is cancelled;
// then, for DrainTime, it answers new requests with 503 (see DrainTime),
// then stops accepting, lets the requests of every connection it accepted
// finish within ShutdownTimeout (closing the connections of those that do
// not) and returns nil. It closes ln. logger receives the server's logs
// (nil: none).
func Serve(ctx context.Context, ln net.Listener, h http.Handler, cfg ServeConfig, logger *slog.Logger) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		_ = ln.Close()
		return fmt.Errorf("invalid serve config: %w", err)
	}
	logger = logs.OrDiscard(logger)
	var draining atomic.Bool
	conns := newConnTable(cfg.MaxConnections, cfg.MaxConnectionsPerClient)
	srv := &http.Server{
		Handler:           drainable(h, &draining),
		MaxHeaderBytes:    MaxHeaderBytes,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       cfg.RequestTimeout + 30*time.Second,
		WriteTimeout:      2*cfg.RequestTimeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ConnState:         conns.track,
	}
	ln = limitListener(ln, conns)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logger.Info("serving JSON-RPC", "addr", ln.Addr().String())

	select {
	case err := <-served:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down JSON-RPC server", "drain", cfg.DrainTime, "timeout", cfg.ShutdownTimeout)
	// Every connection closes once its answer is written: none is left
	// idle for a request that would race the shutdown.
	srv.SetKeepAlivesEnabled(false)
	if cfg.DrainTime > 0 {
		draining.Store(true)
		drained := time.NewTimer(cfg.DrainTime)
		select {
		case <-drained.C:
		case err := <-served:
			drained.Stop()
			return fmt.Errorf("serve http: %w", err)
		}
	}
	// Stop accepting ourselves, before srv.Shutdown: net/http drops without
	// an answer a connection whose request it reads after Shutdown has
	// begun, and a connection accepted in the last moments of the drain may
	// not have been read yet. So Serve returns first (every connection it
	// accepted is then tracked), and Shutdown waits until each has been
	// answered and closed. Connections still queued in the kernel are
	// reset by the close: nothing was promised to them.
	_ = ln.Close()
	if err := <-served; err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("serve http: %w", err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	err := conns.waitSettled(shutdownCtx)
	if err == nil {
		err = srv.Shutdown(shutdownCtx)
	}
	if err != nil {
		logger.Warn("in-flight requests did not finish in time; closing their connections", "err", err)
		_ = srv.Close()
	}
	return nil
}

// drainable answers every request with 503 and NEAR's error envelope while
// draining is set, and passes it to h otherwise.
func drainable(h http.Handler, draining *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !draining.Load() {
			h.ServeHTTP(w, r)
			return
		}
		body, err := json.Marshal(near.Response{JSONRPC: "2.0", Error: shuttingDown(), ID: json.RawMessage("null")})
		if err != nil {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, body)
	})
}
