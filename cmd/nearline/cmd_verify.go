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
		if err != nil && ctx.Err() != nil && !errors.As(err, &status) && !errors.Is(err, errUsage) {
			err = &exitStatusError{status: 2, err: fmt.Errorf("interrupted before every request was compared: %w", err)}
		}
	}()
	fs := newFlagSet(env, "verify", "[--database-url URL | --data-dir DIR] --against URL [--from H] [--to H] [--sample N] [flags]")
	db := registerDatabaseFlags(fs, env)
	against := stringFlag(fs, env, "against", "NEARLINE_AGAINST", "", "NEAR JSON-RPC URL of the node to compare the archive with (required)")
	fromFlag := heightFlag(fs, env, "from", "NEARLINE_VERIFY_FROM", nil, "lowest height to sample (default: the archive's first block)")
	toFlag := heightFlag(fs, env, "to", "NEARLINE_VERIFY_TO", nil, "highest height to sample (default: the archive's latest block)")
	sample := intFlag(fs, env, "sample", "NEARLINE_VERIFY_SAMPLE", verify.DefaultSample, positive, "heights sampled in [from, to] (every height when the range is smaller)")
	seedFlag := optUintFlag(fs, env, "seed", "NEARLINE_VERIFY_SEED", "seed of the sample; the same seed over the same archive asks the same requests (default: from the clock, printed)")
	accounts := intFlag(fs, env, "accounts", "NEARLINE_VERIFY_ACCOUNTS", verify.DefaultAccountsPerHeight, positive, "accounts queried per height among those it touched (half as many more from the other sampled heights)")
	concurrency := intFlag(fs, env, "concurrency", "NEARLINE_VERIFY_CONCURRENCY", verify.DefaultConcurrency, positive, "requests in flight at once")
	timeout := durationFlag(fs, env, "timeout", "NEARLINE_VERIFY_TIMEOUT", verify.DefaultTimeout, positiveDuration, "time limit of one request (to the archive, and each attempt to the node)")
	show := intFlag(fs, env, "show", "NEARLINE_VERIFY_SHOW", verify.DefaultMaxShown, positive, "differences printed (the first in request order)")
	progress := durationFlag(fs, env, "progress-interval", "NEARLINE_PROGRESS_INTERVAL", verify.DefaultProgressInterval, positiveDuration, "how often progress is logged")
	viewStateLimit := intFlag(fs, env, "view-state-limit", "NEARLINE_VIEW_STATE_LIMIT", archive.DefaultViewStateLimit, positive.orMinusOne("no limit"), viewStateLimitHelp)
	maxConns := intFlag(fs, env, "db-max-conns", "NEARLINE_DB_MAX_CONNS", verify.DefaultConcurrency+4, positive, dbMaxConnsHelp)
	archiveCfg := archive.Config{ViewStateLimit: *viewStateLimit}
	var node *verify.Node
	err = parseCommand(fs, args, func() error {
		if *against == "" {
			return errors.New("--against (or NEARLINE_AGAINST) is required")
		}
		return db.check()
	}, func() error {
		if from, to := *fromFlag, *toFlag; from != nil && to != nil && *from > *to {
			return fmt.Errorf("--from %d is above --to %d", *from, *to)
		}
		archiveCfg.ViewStateLimit = *viewStateLimit
		return archiveCfg.Validate()
	}, func() (err error) {
		node, err = verify.NewNode(upstream.Config{Endpoints: []string{*against}, Timeout: *timeout})
		return err
	})
	if err != nil {
		return err
	}
	from, to := *fromFlag, *toFlag
	seed := uint64(time.Now().UnixNano())
	if *seedFlag != nil {
		seed = **seedFlag
	}
	// The archive is opened read-only.
	st, closeStore, err := db.openStore(ctx, env, archiveUse{url: verify.ReadOnlyURL, cfg: store.Config{
		MaxConns:         int32(*maxConns),
		ApplicationName:  "nearline-verify",
		StatementTimeout: *timeout,
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
	local, err := verify.NewArchive(backend, rpcserve.Config{RequestTimeout: *timeout}, env.logger)
	if err != nil {
		return err
	}
	defer local.Close(context.WithoutCancel(ctx))

	plan, err := verify.NewPlan(ctx, local, verify.PlanConfig{
		From: from, To: to, Sample: *sample, Seed: seed, AccountsPerHeight: *accounts,
		Concurrency: *concurrency,
	}, env.logger)
	if errors.Is(err, verify.ErrRange) {
		fmt.Fprintln(fs.Output(), "nearline verify:", err)
		return errUsage
	}
	if err != nil {
		return fmt.Errorf("plan requests: %w", err)
	}
	fmt.Fprintf(env.stdout, "nearline verify: %d heights sampled in %d-%d (seed %d), %d requests, against %s\n\n",
		len(plan.Heights), plan.From, plan.To, seed, len(plan.Requests), httpcall.RedactURL(*against))
	report, err := verify.Run(ctx, local, node, plan.Requests, verify.RunConfig{
		Concurrency: *concurrency, MaxShown: *show, ProgressInterval: *progress,
	}, env.logger)
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
