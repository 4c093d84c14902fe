package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/sim"
)

// runSim serves a simulated NEAR chain over JSON-RPC.
func runSim(ctx context.Context, env *environment, args []string) error {
	def := sim.DefaultConfig()
	fs := newFlagSet(env, "sim", "--listen ADDR [flags]")
	listen := stringFlag(fs, env, "listen", "NEARLINE_SIM_LISTEN", "127.0.0.1:3030", "address to serve JSON-RPC on")
	seed := uint64Flag(fs, env, "seed", "NEARLINE_SEED", 0, anyUint, "chain seed: same seed and flags give the same chain, byte for byte")
	shards := intFlag(fs, env, "shards", "NEARLINE_SHARDS", def.Shards, intRange{min: 1, max: 16}, "number of shards")
	blockTime := durationFlag(fs, env, "block-time", "NEARLINE_BLOCK_TIME", def.BlockTime, zeroOrMore, "time between blocks; 0 produces every block up to --max-height at once")
	maxHeight := uint64Flag(fs, env, "max-height", "NEARLINE_MAX_HEIGHT", 0, anyUint, "last height to produce (0 = no limit; required with --block-time 0)")
	genesisOut := stringFlag(fs, env, "genesis-out", "NEARLINE_GENESIS_OUT", "", "write the chain's genesis.json (config and records) to this file")
	archival := boolFlag(fs, env, "archival", "NEARLINE_ARCHIVAL", true, "keep every block; --archival=false without --gc-window keeps 5 epochs, as a regular nearcore node")
	gcWindow := uint64Flag(fs, env, "gc-window", "NEARLINE_GC_WINDOW", 0, anyUint, "act as a regular node that keeps only the last N heights (implies --archival=false)")
	skipRate := fractionFlag(fs, env, "skip-rate", "NEARLINE_SKIP_RATE", def.SkipRate, "fraction of heights with no block")
	missingChunkRate := fractionFlag(fs, env, "missing-chunk-rate", "NEARLINE_MISSING_CHUNK_RATE", def.MissingChunkRate, "fraction of chunks not produced")
	txsPerBlock := intFlag(fs, env, "txs-per-block", "NEARLINE_TXS_PER_BLOCK", def.TxsPerBlock, intRange{min: 0, max: 1000}, "mean number of transactions per block")
	deployRate := fractionFlag(fs, env, "deploy-rate", "NEARLINE_DEPLOY_RATE", def.DeployRate, "fraction of transactions that deploy a contract (0 keeps the default mix, about 2%; mainnet is about 0.001)")
	genesisHeight := uint64Flag(fs, env, "genesis-height", "NEARLINE_GENESIS_HEIGHT", 0, anyUint, "height of the genesis block")
	genesisTime := timeFlag(fs, env, "genesis-time", "NEARLINE_GENESIS_TIME", sim.DefaultGenesisTime, "`time` of the genesis block (RFC 3339); a block's timestamp is it plus one second per height above the genesis, whatever --block-time is")
	epochLength := uint64Flag(fs, env, "epoch-length", "NEARLINE_EPOCH_LENGTH", def.EpochLength, uintRange{2, math.MaxUint64}, "epoch length in heights")
	protocolVersion := uint64Flag(fs, env, "protocol-version", "NEARLINE_PROTOCOL_VERSION", uint64(def.ProtocolVersion), uintRange{1, math.MaxUint32}, "protocol version the chain runs; 77 or above adds global contracts (deployments, distribution receipts, accounts that use them)")
	viewStateLimit := intFlag(fs, env, "view-state-limit", "NEARLINE_VIEW_STATE_LIMIT", sim.DefaultViewStateLimit, positive.orMinusOne("no limit"), viewStateLimitHelp)
	latency := durationFlag(fs, env, "latency", "NEARLINE_LATENCY", 0, zeroOrMore, "latency added to every response")
	jitter := durationFlag(fs, env, "latency-jitter", "NEARLINE_LATENCY_JITTER", 0, zeroOrMore, "random extra latency, up to this much")
	fail5xx := fractionFlag(fs, env, "fail-5xx", "NEARLINE_FAIL_5XX", 0, "fraction of requests answered with HTTP 500/502/503")
	failInternal := fractionFlag(fs, env, "fail-internal", "NEARLINE_FAIL_INTERNAL", 0, "fraction answered with a JSON-RPC INTERNAL_ERROR")
	failMalformed := fractionFlag(fs, env, "fail-malformed", "NEARLINE_FAIL_MALFORMED", 0, "fraction answered with a body that is not JSON")
	failTruncated := fractionFlag(fs, env, "fail-truncated", "NEARLINE_FAIL_TRUNCATED", 0, "fraction answered with a truncated body")
	stall := fractionFlag(fs, env, "stall", "NEARLINE_STALL", 0, "fraction of requests held unanswered (until --stall-duration or the client leaves)")
	stallDuration := durationFlag(fs, env, "stall-duration", "NEARLINE_STALL_DURATION", 30*time.Second, positiveDuration, "longest stall")
	rateLimit := rateFlag(fs, env, "rate-limit", "NEARLINE_RATE_LIMIT", 0, "requests per second before HTTP 429 (0 = no limit)")
	finalityLag := uint64Flag(fs, env, "finality-lag", "NEARLINE_FINALITY_LAG", 0, anyUint, "blocks by which the final head trails the newest block while blocks are produced (0 = every block final at once; nearcore's is 2)")
	reshardAt := heightsFlag(fs, env, "reshard-at", "NEARLINE_RESHARD_AT", "comma-separated `heights`: at the first epoch start at or after each, one shard splits in two (version-2 shard layout, new shard ids, protocol version + 1)")
	forkAt := uint64Flag(fs, env, "fork-at", "NEARLINE_FORK_AT", 0, anyUint, "from this height on serve a different chain whose first block does not link to the previous one (0 = never)")
	yieldTimeout := uint64Flag(fs, env, "yield-timeout", "NEARLINE_YIELD_TIMEOUT", sim.DefaultYieldTimeout, uintRange{1, math.MaxUint64}, "blocks a yielded promise waits for its resume before it runs with a timeout (yield_timeout_length_in_blocks)")
	nearcoreNext := boolFlag(fs, env, "nearcore-next", "NEARLINE_NEARCORE_NEXT", false, "serve every answer and write genesis.json as a newer nearcore would: members and variants Nearline does not model added to accounts, access keys, chunk headers, transactions, outcomes, receipts and some Transfer actions")
	err := parseCommand(fs, args, func() error {
		if *gcWindow > 0 && *archival && isFlagSet(fs, "archival") {
			return errors.New("--archival and --gc-window exclude each other")
		}
		if *blockTime == 0 && *maxHeight == 0 {
			return errors.New("--block-time 0 needs --max-height")
		}
		return checkAddress(fs, env, "listen")
	})
	if err != nil {
		return err
	}
	if !*archival && *gcWindow == 0 {
		*gcWindow = 5 * *epochLength // nearcore's gc_num_epochs_to_keep
	}
	cfg := sim.Config{
		Seed: *seed, Shards: *shards, EpochLength: *epochLength, GenesisHeight: *genesisHeight, GenesisTime: *genesisTime, ProtocolVersion: uint32(*protocolVersion),
		SkipRate: *skipRate, MissingChunkRate: *missingChunkRate, TxsPerBlock: *txsPerBlock, DeployRate: *deployRate,
		ReshardAt: *reshardAt, ForkAt: *forkAt, YieldTimeout: *yieldTimeout, FinalityLag: *finalityLag, BlockTime: *blockTime, MaxHeight: *maxHeight, GCWindow: *gcWindow,
		ViewStateLimit: *viewStateLimit, RPCAddr: *listen, NearcoreNext: *nearcoreNext,
		Faults: sim.FaultConfig{
			Seed: *seed, Latency: *latency, LatencyJitter: *jitter, Fail5xx: *fail5xx,
			FailInternal: *failInternal, FailMalformed: *failMalformed, FailTruncated: *failTruncated,
			Stall: *stall, StallDuration: *stallDuration, RateLimit: *rateLimit,
		},
	}
	node, err := sim.New(ctx, cfg, env.logger)
	if err != nil {
		return fmt.Errorf("start simulator: %w", err)
	}
	defer func() { _ = node.Close(context.Background()) }()
	if *genesisOut != "" {
		if err := node.WriteGenesis(*genesisOut); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *listen, err)
	}
	srv := &http.Server{Handler: node.Handler(), ReadHeaderTimeout: 10 * time.Second}
	env.logger.Info("simulator listening", "addr", ln.Addr().String(), "seed", *seed, "shards", *shards)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		runErr := node.Run(gctx)
		if runErr == nil {
			<-gctx.Done()
		}
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		if runErr != nil {
			return fmt.Errorf("produce blocks: %w", runErr)
		}
		return nil
	})
	return g.Wait()
}
