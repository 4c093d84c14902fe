package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nearline/nearline/archive"
	"github.com/nearline/nearline/nearvm"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/store"
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
	fromFlag := stringFlag(fs, env, "from", "NEARLINE_FROM", "", "lowest height to sample (default: the archive's first block)")
	toFlag := stringFlag(fs, env, "to", "NEARLINE_TO", "", "highest height to sample (default: the archive's latest block)")
	sample := intFlag(fs, env, "sample", "NEARLINE_VERIFY_SAMPLE", verify.DefaultSample, "heights sampled in [from, to] (every height when the range is smaller)")
	seedFlag := stringFlag(fs, env, "seed", "NEARLINE_VERIFY_SEED", "", "seed of the sample; the same seed over the same archive asks the same requests (default: from the clock, printed)")
	accounts := intFlag(fs, env, "accounts", "NEARLINE_VERIFY_ACCOUNTS", verify.DefaultAccountsPerHeight, "accounts queried per height among those it touched (half as many more from the other sampled heights)")
	concurrency := intFlag(fs, env, "concurrency", "NEARLINE_VERIFY_CONCURRENCY", verify.DefaultConcurrency, "requests in flight at once")
	timeout := durationFlag(fs, env, "timeout", "NEARLINE_VERIFY_TIMEOUT", verify.DefaultTimeout, "time limit of one request (to the archive, and each attempt to the node)")
	show := intFlag(fs, env, "show", "NEARLINE_VERIFY_SHOW", verify.DefaultMaxShown, "differences printed (the first in request order)")
	progress := durationFlag(fs, env, "progress-interval", "NEARLINE_PROGRESS_INTERVAL", verify.DefaultProgressInterval, "how often progress is logged")
	viewStateLimit := intFlag(fs, env, "view-state-limit", "NEARLINE_VIEW_STATE_LIMIT", archive.DefaultViewStateLimit, "view_state limit in bytes of contract state, as serve's (-1 = no limit)")
	maxConns := intFlag(fs, env, "db-max-conns", "NEARLINE_DB_MAX_CONNS", verify.DefaultConcurrency+4, "PostgreSQL pool size")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	usageErr := func(msg string) error {
		fmt.Fprintln(fs.Output(), "nearline verify:", msg)
		fs.Usage()
		return errUsage
	}
	// A value out of place is said in one line, without the usage.
	lineErr := func(msg string) error {
		fmt.Fprintln(fs.Output(), "nearline verify:", msg)
		return errUsage
	}
	if *against == "" {
		return usageErr("--against (or NEARLINE_AGAINST) is required")
	}
	if err := db.check(); err != nil {
		return lineErr(err.Error())
	}
	from, err := parseHeight("from", *fromFlag)
	if err != nil {
		return lineErr(err.Error())
	}
	to, err := parseHeight("to", *toFlag)
	if err != nil {
		return lineErr(err.Error())
	}
	if from != nil && to != nil && *from > *to {
		return lineErr(fmt.Sprintf("--from %d is above --to %d", *from, *to))
	}
	seed := uint64(time.Now().UnixNano())
	if strings.TrimSpace(*seedFlag) != "" {
		if seed, err = strconv.ParseUint(strings.TrimSpace(*seedFlag), 10, 64); err != nil {
			return lineErr(fmt.Sprintf("--seed %q: want a non-negative integer", *seedFlag))
		}
	}
	if *sample < 1 || *accounts < 1 || *concurrency < 1 || *timeout <= 0 || *show < 1 || *progress <= 0 || *maxConns < 1 {
		return lineErr("--sample, --accounts, --concurrency, --timeout, --show, --progress-interval and --db-max-conns must be positive")
	}
	archiveCfg := archive.Config{ViewStateLimit: *viewStateLimit}
	if err := archiveCfg.Validate(); err != nil {
		return lineErr(err.Error())
	}
	node, err := verify.NewNode(verify.NodeConfig{URL: *against, Timeout: *timeout})
	if err != nil {
		return lineErr(err.Error())
	}

	databaseURL, release, err := db.open(ctx, env, false)
	if err != nil {
		return unreachable(err)
	}
	defer release()
	// The archive is opened read-only.
	st, err := store.Open(ctx, verify.ReadOnlyURL(databaseURL), store.Config{
		MaxConns:         int32(*maxConns),
		ApplicationName:  "nearline-verify",
		StatementTimeout: *timeout,
		Logger:           env.logger,
	})
	if err != nil {
		return unreachable(fmt.Errorf("open archive: %w", err))
	}
	defer st.Close()
	if err := requireSchema(ctx, st); err != nil {
		return unreachable(err)
	}
	if _, err := node.Answer(ctx, verify.NewRequest("status", []any{}).Body()); err != nil {
		return unreachable(fmt.Errorf("ask node status: %w", err))
	}
	vm, err := nearvm.New(ctx, nearvm.Config{Logger: env.logger})
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
		return lineErr(err.Error())
	}
	if err != nil {
		return fmt.Errorf("plan requests: %w", err)
	}
	fmt.Fprintf(env.stdout, "nearline verify: %d heights sampled in %d-%d (seed %d), %d requests, against %s\n\n",
		len(plan.Heights), plan.From, plan.To, seed, len(plan.Requests), *against)
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
