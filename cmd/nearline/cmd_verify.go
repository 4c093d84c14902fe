package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nearline/nearline/archive"
	"github.com/nearline/nearline/internal/httpcall"
	"github.com/nearline/nearline/nearvm"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/upstream"
	"github.com/nearline/nearline/verify"

	"github.com/nearline/nearline/internal/envflag"
)

// errDifferent is a verify run whose answers differed: exit status 1.
var errDifferent = errors.New("the archive and the node answered differently")

// runVerify asks the archive (in-process, read-only) and a node the same
// requests and prints how their answers compare. Exit status: 0 when all
// were identical, 1 on any difference, 2 when the command line is wrong or
// the database or the node cannot be reached, or the run is interrupted.
func runVerify(ctx context.Context, env *environment, args []string) (err error) {
	defer func() {
		// Interrupted (SIGINT/SIGTERM): not every request was compared, so
		// this is no pass, whatever the other commands make of a signal.
		var status *exitStatusError
		if err != nil && ctx.Err() != nil && !errors.As(err, &status) && !errors.Is(err, envflag.ErrUsage) {
			err = &exitStatusError{status: 2, err: fmt.Errorf("interrupted before every request was compared: %w", err)}
		}
	}()
	fs := newFlagSet(env, "verify", "[--database-url URL | --data-dir DIR] --against URL [--from H] [--to H] [--sample N] [flags]")
	db, against, timeout, maxConns := registerDatabaseFlags(fs), "", verify.DefaultTimeout, verify.DefaultConcurrency+4
	planCfg := verify.PlanConfig{Sample: verify.DefaultSample, AccountsPerHeight: verify.DefaultAccountsPerHeight}
	runCfg := verify.RunConfig{Concurrency: verify.DefaultConcurrency, MaxShown: verify.DefaultMaxShown,
		ProgressInterval: verify.DefaultProgressInterval}
	archiveCfg := archive.Config{ViewStateLimit: archive.DefaultViewStateLimit}
	fs.StringVar(&against, "against", "", "NEAR JSON-RPC URL of the node to compare the archive with (required)")
	fs.Var(envflag.Height(&planCfg.From, nil), "from", "lowest height to sample (default: the archive's first block)")
	fs.Var(envflag.Height(&planCfg.To, nil), "to", "highest height to sample (default: the archive's latest block)")
	fs.Var(envflag.Number(&planCfg.Sample, 1, 0), "sample", "heights sampled in [from, to] (every height when the range is smaller)")
	var seed *uint64
	fs.Var(envflag.Optional(&seed, "number", "a non-negative integer", nil), "seed", "seed of the sample; the same seed over the same archive asks "+
		"the same requests (default: from the clock, printed)")
	fs.Var(envflag.Number(&planCfg.AccountsPerHeight, 1, 0), "accounts", "accounts queried per height among those it touched "+
		"(half as many more from the other sampled heights)")
	fs.Var(envflag.Number(&runCfg.Concurrency, 1, 0), "concurrency", "requests in flight at once")
	fs.Var(envflag.Duration(&timeout, envflag.Above0), "timeout", "time limit of one request (to the archive, and each attempt to the node)")
	fs.Var(envflag.Number(&runCfg.MaxShown, 1, 0), "show", "differences printed (the first in request order)")
	fs.Var(envflag.Duration(&runCfg.ProgressInterval, envflag.Above0), "progress-interval", "how often progress is logged")
	fs.Var(envflag.OrMinusOne(envflag.Number(&archiveCfg.ViewStateLimit, 1, 0), "no limit"), "view-state-limit", viewStateLimitHelp)
	fs.Var(envflag.Number(&maxConns, 1, 0), "db-max-conns", dbMaxConnsHelp)
	var node *verify.Node
	err = env.flags().Parse(fs, args, func() error {
		if against == "" {
			return errors.New("--against (or NEARLINE_AGAINST) is required")
		}
		return db.check()
	}, func() error {
		if from, to := planCfg.From, planCfg.To; from != nil && to != nil && *from > *to {
			return fmt.Errorf("--from %d is above --to %d", *from, *to)
		}
		return archiveCfg.Validate()
	}, func() (err error) {
		node, err = verify.NewNode(upstream.Config{Endpoints: []string{against}, Timeout: timeout})
		return err
	})
	if err != nil {
		return err
	}
	planCfg.Seed = uint64(time.Now().UnixNano())
	if seed != nil {
		planCfg.Seed = *seed
	}
	planCfg.Concurrency = runCfg.Concurrency
	// The archive is opened read-only.
	st, closeStore, err := db.openStore(ctx, env, archiveUse{url: verify.ReadOnlyURL, cfg: store.Config{
		MaxConns:         int32(maxConns),
		ApplicationName:  "nearline-verify",
		StatementTimeout: timeout,
	}})
	if err != nil {
		return unreachable(err)
	}
	defer closeStore()
	if _, err := node.Answer(ctx, verify.NewRequest("status", []any{}).Body()); err != nil {
		return unreachable(fmt.Errorf("ask node status: %w", err))
	}
	vm, err := nearvm.New(ctx, nearvm.Config{}, env.logger)
	if err != nil {
		return fmt.Errorf("start contract runtime: %w", err)
	}
	defer vm.Close(context.WithoutCancel(ctx))
	backend, err := archive.New(st, vm, archiveCfg, env.logger)
	if err != nil {
		return err
	}
	local, err := verify.NewArchive(backend, rpcserve.Config{RequestTimeout: timeout}, env.logger)
	if err != nil {
		return err
	}
	defer local.Close(context.WithoutCancel(ctx))

	plan, err := verify.NewPlan(ctx, local, planCfg, env.logger)
	if errors.Is(err, verify.ErrRange) {
		fmt.Fprintln(fs.Output(), "nearline verify:", err)
		return envflag.ErrUsage
	}
	if err != nil {
		return fmt.Errorf("plan requests: %w", err)
	}
	fmt.Fprintf(env.stdout, "nearline verify: %d heights sampled in %d-%d (seed %d), %d requests, against %s\n\n",
		len(plan.Heights), plan.From, plan.To, planCfg.Seed, len(plan.Requests), httpcall.RedactURL(against))
	report, err := verify.Run(ctx, local, node, plan.Requests, runCfg, env.logger)
	switch {
	case errors.Is(err, verify.ErrUnreachable):
		return unreachable(err)
	case err != nil:
		return err
	}
	if err := report.Write(env.stdout); err != nil {
		return fmt.Errorf("print report: %w", err)
	}
	if n := report.Different(); n > 0 {
		return fmt.Errorf("%w: %d of %d answers", errDifferent, n, report.Total.Requests)
	}
	return nil
}
