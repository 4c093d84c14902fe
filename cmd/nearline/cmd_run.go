package main

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/internal/metrics"
	"github.com/nearline/nearline/sim"

	"github.com/nearline/nearline/internal/envflag"
)

// runRun migrates the archive, then indexes and serves in one process until
// SIGINT/SIGTERM. The indexer and the server share one database pool
// (--db-max-conns plus --rpc-db-max-conns connections) and one metrics
// registry (served at /metrics on the RPC port, and on --metrics-listen when
// set). The server answers from what is indexed while the indexer waits for
// an unreachable upstream, and /health says the indexer is cut off. When
// the indexer reaches --to it stops and serving goes on; when either
// fails, both stop.
func runRun(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "run", "(--sim | [--source rpc|neardata|lake] --upstream URL[,URL...] [--from H|latest]) "+
		"[--database-url URL | --data-dir DIR] [--listen ADDR] [flags]",
		envflag.Example{Args: "--sim", Does: "the trial: a simulated chain, indexed into the embedded PostgreSQL and served on 127.0.0.1:3030"},
		envflag.Example{Args: mainnetArgs, Does: "mainnet from its final head on (no history before it), within neardata's free tier"},
		envflag.Example{Args: "--database-url postgres://nearline@127.0.0.1/nearline --upstream http://127.0.0.1:3031 --genesis genesis.json",
			Does: "your own PostgreSQL, following a JSON-RPC node (here `nearline sim --listen 127.0.0.1:3031`) from its genesis"})
	index := registerIndexFlags(fs, env)
	serve := registerServeFlags(fs, env, true)
	withSim := false
	fs.Var(envflag.Bool(&withSim), "sim", "index and serve a simulated chain made in this process "+
		"(sim's defaults, a block a second) instead of an --upstream: the one-command trial")
	var settings serveSettings
	var simUp *sim.Local
	defer func() {
		if simUp != nil {
			simUp.Close()
		}
	}()
	startSim := func() (err error) {
		if !withSim {
			return nil
		}
		if index.upstream != "" || index.genesis != "" || index.source != sourceRPC {
			return errors.New("--sim makes its own upstream and genesis: leave out --upstream, --genesis and --source")
		}
		if simUp, err = sim.StartLocal(ctx, env.logger); err != nil {
			return err
		}
		index.upstream, index.genesis = simUp.URL(), simUp.GenesisPath()
		return nil
	}
	err := env.flags().Parse(fs, args, startSim, index.check, serve.check, func() (err error) {
		// The server forwards what the archive cannot answer to the first
		// RPC upstream, with its API key.
		settings, err = serve.settings(index.forwardTo())
		return err
	})
	if err != nil {
		return err
	}
	s, closeStore, err := index.openStore(ctx, serve.maxConns)
	if err != nil {
		return err
	}
	defer closeStore()
	reg := metrics.NewRegistry()
	settings.upstream = index.tracker()

	if simUp != nil {
		// A restarted trial goes on where it stopped: the simulator makes
		// every height up to the archive's head at once.
		c, ok, err := s.Cursor(ctx)
		if err != nil {
			return fmt.Errorf("simulator: %w", err)
		}
		if ok {
			simUp.Node.ResumeAt(c.Height)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	if simUp != nil {
		g.Go(func() error { return simUp.Serve(gctx) })
	}
	g.Go(func() error {
		if err := indexWith(gctx, env, index, s, reg, settings.upstream); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		switch {
		case gctx.Err() != nil: // stopped by a signal, or by the server failing
		case index.indexer.To != nil:
			env.logger.Info("indexer reached --to; still serving until interrupted", "to", *index.indexer.To)
		default:
			env.logger.Info("indexer's range met the range of another cursor; still serving until interrupted")
		}
		return nil
	})
	g.Go(func() error {
		if err := serveArchive(gctx, env, s, settings, reg); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		return nil
	})
	return g.Wait()
}
