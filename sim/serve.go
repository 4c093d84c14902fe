package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/internal/logs"
)

// Serve answers JSON-RPC from n on ln and produces its blocks until ctx
// ends (once its chain is produced, it goes on answering).
func (n *Node) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: n.Handler(), ReadHeaderTimeout: 10 * time.Second}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("simulator: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		runErr := n.Run(gctx)
		if runErr == nil {
			<-gctx.Done()
		}
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		if runErr != nil {
			return fmt.Errorf("simulator: produce blocks: %w", runErr)
		}
		return nil
	})
	return g.Wait()
}

// Local is `nearline run --sim`'s upstream: a simulated chain served
// in-process on a loopback port, so that one command, with nothing set up
// but PostgreSQL's binaries, indexes and serves a chain.
type Local struct {
	Node *Node
	ln   net.Listener
	dir  string
}

// StartLocal makes the simulator (DefaultConfig: one block a second),
// listens for it on a loopback port and writes its genesis.json into a
// temporary directory. Serve it with Serve; Close removes it.
func StartLocal(ctx context.Context, logger *slog.Logger) (*Local, error) {
	logger = logs.OrDiscard(logger)
	node, err := New(ctx, DefaultConfig(), logger)
	if err != nil {
		return nil, fmt.Errorf("start simulator: %w", err)
	}
	l := &Local{Node: node}
	if l.dir, err = os.MkdirTemp("", "nearline-sim-"); err != nil {
		l.Close()
		return nil, fmt.Errorf("simulator genesis: %w", err)
	}
	if err := node.WriteGenesis(l.GenesisPath()); err != nil {
		l.Close()
		return nil, fmt.Errorf("simulator genesis: %w", err)
	}
	if l.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		l.Close()
		return nil, fmt.Errorf("simulator listener: %w", err)
	}
	logger.Info("simulator listening", "addr", l.ln.Addr().String(), "chain_id", DefaultChainID)
	return l, nil
}

// URL is the simulator's JSON-RPC endpoint.
func (l *Local) URL() string { return "http://" + l.ln.Addr().String() }

// GenesisPath is the file holding the simulator's genesis.json.
func (l *Local) GenesisPath() string { return filepath.Join(l.dir, "genesis.json") }

// Serve answers JSON-RPC and produces blocks until ctx ends.
func (l *Local) Serve(ctx context.Context) error { return l.Node.Serve(ctx, l.ln) }

// Close stops listening and removes the genesis file.
func (l *Local) Close() {
	if l.ln != nil {
		_ = l.ln.Close()
	}
	if l.dir != "" {
		_ = os.RemoveAll(l.dir)
	}
	_ = l.Node.Close(context.Background())
}
