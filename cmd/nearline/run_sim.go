package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/store"
)

// simUpstream is `run --sim`: a simulated chain served in-process on a
// loopback port as the indexer's upstream, so that one command, with
// nothing set up but PostgreSQL's binaries, indexes and serves a chain.
type simUpstream struct {
	node *sim.Node
	ln   net.Listener
	dir  string
}

// startSimUpstream makes the simulator (sim's defaults: one block a
// second), listens for it on a loopback port and writes its genesis.json
// into a temporary directory. Serve it with serve; Close removes it.
func startSimUpstream(ctx context.Context, env *environment) (*simUpstream, error) {
	node, err := sim.New(ctx, sim.DefaultConfig(), env.logger)
	if err != nil {
		return nil, fmt.Errorf("start simulator: %w", err)
	}
	s := &simUpstream{node: node}
	if s.dir, err = os.MkdirTemp("", "nearline-sim-"); err != nil {
		s.Close()
		return nil, fmt.Errorf("simulator genesis: %w", err)
	}
	if err := node.WriteGenesis(s.genesisPath()); err != nil {
		s.Close()
		return nil, fmt.Errorf("simulator genesis: %w", err)
	}
	if s.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		s.Close()
		return nil, fmt.Errorf("simulator listener: %w", err)
	}
	env.logger.Info("simulator listening", "addr", s.ln.Addr().String(), "chain_id", sim.DefaultChainID)
	return s, nil
}

// resumeFrom makes the simulator produce at once every height up to the
// archive's head, so that a restarted trial goes on where it stopped.
func (s *simUpstream) resumeFrom(ctx context.Context, archive *store.Store) error {
	c, ok, err := archive.Cursor(ctx)
	if err != nil {
		return fmt.Errorf("simulator: %w", err)
	}
	if ok {
		s.node.ResumeAt(c.Height)
	}
	return nil
}

func (s *simUpstream) url() string         { return "http://" + s.ln.Addr().String() }
func (s *simUpstream) genesisPath() string { return filepath.Join(s.dir, "genesis.json") }

// serve answers JSON-RPC and produces blocks until ctx ends.
func (s *simUpstream) serve(ctx context.Context) error { return serveNode(ctx, s.node, s.ln) }

// serveNode answers JSON-RPC from node on ln and produces its blocks
// until ctx ends (once its chain is produced, it goes on answering).
func serveNode(ctx context.Context, node *sim.Node, ln net.Listener) error {
	srv := &http.Server{Handler: node.Handler(), ReadHeaderTimeout: 10 * time.Second}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("simulator: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		runErr := node.Run(gctx)
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

// Close stops listening and removes the genesis file.
func (s *simUpstream) Close() {
	if s.ln != nil {
		_ = s.ln.Close()
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
	_ = s.node.Close(context.Background())
}
