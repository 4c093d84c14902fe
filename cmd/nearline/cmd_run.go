package main

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/internal/metrics"
	"github.com/nearline/nearline/store"
)

// runRun migrates the archive, then indexes and serves in one process until
// SIGINT/SIGTERM. The indexer and the server share one database pool
// (--db-max-conns plus --rpc-db-max-conns connections) and one metrics
// registry (served at /metrics on the RPC port, and on --metrics-listen when
// set). When the indexer reaches --to it stops and serving goes on; when
// either fails, both stop.
func runRun(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "run", "[--database-url URL | --data-dir DIR] [--source rpc|neardata|lake] --upstream URL[,URL...] [--listen ADDR] [flags]")
	index := registerIndexFlags(fs, env)
	serve := registerServeFlags(fs, env, true)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *index.upstream == "" {
		fmt.Fprintln(fs.Output(), "nearline run: --upstream (or NEARLINE_UPSTREAM) is required")
		fs.Usage()
		return errUsage
	}
	if err := index.check(); err != nil {
		fmt.Fprintln(fs.Output(), "nearline run:", err)
		return errUsage
	}
	// The server forwards what the archive cannot answer to the first RPC
	// upstream.
	settings, err := serve.settings(env, index.forwardTo())
	if err != nil {
		fmt.Fprintf(fs.Output(), "nearline run: %v\n", err)
		return errUsage
	}
	databaseURL, release, err := index.db.open(ctx, env, true)
	if err != nil {
		return err
	}
	defer release()
	if err := store.MigrateLogged(ctx, databaseURL, env.logger); err != nil {
		return err
	}
	s, err := store.Open(ctx, databaseURL, store.Config{MaxConns: int32(*index.maxConns + *serve.maxConns), Logger: env.logger,
		SkipEvents: !*index.events, Cursor: *index.cursor})
	if err != nil {
		return err
	}
	defer s.Close()
	reg := metrics.NewRegistry()

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := indexWith(gctx, env, index, s, reg); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		env.logger.Info("indexer finished; still serving until interrupted")
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
