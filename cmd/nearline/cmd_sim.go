package main

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/nearline/nearline/sim"

	"github.com/nearline/nearline/internal/envflag"
)

// runSim serves a simulated NEAR chain over JSON-RPC.
func runSim(ctx context.Context, env *environment, args []string) error {
	cfg, archival := sim.DefaultConfig(), true
	cfg.RPCAddr, cfg.GenesisTime, cfg.ViewStateLimit = "127.0.0.1:3030", sim.DefaultGenesisTime, sim.DefaultViewStateLimit
	cfg.YieldTimeout, cfg.Faults.StallDuration = sim.DefaultYieldTimeout, sim.DefaultStallDuration
	var genesisOut string
	fs := newFlagSet(env, "sim", "--listen ADDR [flags]")
	fs.StringVar(&cfg.RPCAddr, "listen", cfg.RPCAddr, "address to serve JSON-RPC on")
	fs.Var(envflag.Number(&cfg.Seed, 0, 0), "seed", "chain seed: same seed and flags give the same chain, byte for byte")
	fs.Var(envflag.Number(&cfg.Shards, 1, 16), "shards", "number of shards")
	fs.Var(envflag.Duration(&cfg.BlockTime, envflag.OrZero), "block-time",
		"time between blocks; 0 produces every block up to --max-height at once")
	fs.Var(envflag.Number(&cfg.MaxHeight, 0, 0), "max-height", "last height to produce (0 = no limit; required with --block-time 0)")
	fs.StringVar(&genesisOut, "genesis-out", "", "write the chain's genesis.json (config and records) to this file")
	fs.Var(envflag.Bool(&archival), "archival",
		"keep every block; --archival=false without --gc-window keeps 5 epochs, as a regular nearcore node")
	fs.Var(envflag.Number(&cfg.GCWindow, 0, 0), "gc-window",
		"act as a regular node that keeps only the last N heights (implies --archival=false)")
	fs.Var(envflag.Number(&cfg.SkipRate, 0, 1), "skip-rate", "fraction of heights with no block")
	fs.Var(envflag.Number(&cfg.MissingChunkRate, 0, 1), "missing-chunk-rate", "fraction of chunks not produced")
	fs.Var(envflag.Number(&cfg.TxsPerBlock, 0, 1000), "txs-per-block", "mean number of transactions per block")
	fs.Var(envflag.Number(&cfg.DeployRate, 0, 1), "deploy-rate", "fraction of transactions that deploy a contract "+
		"(0 keeps the default mix, about 2%; mainnet is about 0.001)")
	fs.Var(envflag.Number(&cfg.GenesisHeight, 0, 0), "genesis-height", "height of the genesis block")
	fs.Var(envflag.Time(&cfg.GenesisTime), "genesis-time", "`time` of the genesis block (RFC 3339); a block's timestamp "+
		"is it plus one second per height above the genesis, whatever --block-time is")
	fs.Var(envflag.Number(&cfg.EpochLength, 2, 0), "epoch-length", "epoch length in heights")
	fs.Var(envflag.Number(&cfg.ProtocolVersion, 1, 0), "protocol-version", "protocol version the chain runs; "+
		"77 or above adds global contracts (deployments, distribution receipts, accounts that use them)")
	fs.Var(envflag.OrMinusOne(envflag.Number(&cfg.ViewStateLimit, 1, 0), "no limit"), "view-state-limit", viewStateLimitHelp)
	fs.Var(envflag.Duration(&cfg.Faults.Latency, envflag.OrZero), "latency", "latency added to every response")
	fs.Var(envflag.Duration(&cfg.Faults.LatencyJitter, envflag.OrZero), "latency-jitter", "random extra latency, up to this much")
	fs.Var(envflag.Number(&cfg.Faults.Fail5xx, 0, 1), "fail-5xx", "fraction of requests answered with HTTP 500/502/503")
	fs.Var(envflag.Number(&cfg.Faults.FailInternal, 0, 1), "fail-internal", "fraction answered with a JSON-RPC INTERNAL_ERROR")
	fs.Var(envflag.Number(&cfg.Faults.FailMalformed, 0, 1), "fail-malformed", "fraction answered with a body that is not JSON")
	fs.Var(envflag.Number(&cfg.Faults.FailTruncated, 0, 1), "fail-truncated", "fraction answered with a truncated body")
	fs.Var(envflag.Number(&cfg.Faults.Stall, 0, 1), "stall",
		"fraction of requests held unanswered (until --stall-duration or the client leaves)")
	fs.Var(envflag.Duration(&cfg.Faults.StallDuration, envflag.Above0), "stall-duration", "longest stall")
	fs.Var(envflag.Number(&cfg.Faults.RateLimit, 0, 0), "rate-limit", "requests per second before HTTP 429 (0 = no limit)")
	fs.Var(envflag.Number(&cfg.FinalityLag, 0, 0), "finality-lag", "blocks by which the final head trails the newest block "+
		"while blocks are produced (0 = every block final at once; nearcore's is 2)")
	fs.Var(envflag.Heights(&cfg.ReshardAt), "reshard-at", "comma-separated `heights`: at the first epoch start at or after each, "+
		"one shard splits in two (version-2 shard layout, new shard ids, protocol version + 1)")
	fs.Var(envflag.Number(&cfg.ForkAt, 0, 0), "fork-at",
		"from this height on serve a different chain whose first block does not link to the previous one (0 = never)")
	fs.Var(envflag.Number(&cfg.YieldTimeout, 1, 0), "yield-timeout", "blocks a yielded promise waits for its resume before it "+
		"runs with a timeout (yield_timeout_length_in_blocks)")
	fs.Var(envflag.Bool(&cfg.NearcoreNext), "nearcore-next", "serve every answer and write genesis.json as a newer nearcore "+
		"would: members and variants Nearline does not model added to accounts, access keys, chunk headers, "+
		"transactions, outcomes, receipts and some Transfer actions")
	err := env.flags().Parse(fs, args, func() error {
		if cfg.GCWindow > 0 && archival && envflag.IsSet(fs, "archival") {
			return errors.New("--archival and --gc-window exclude each other")
		}
		if cfg.BlockTime == 0 && cfg.MaxHeight == 0 {
			return errors.New("--block-time 0 needs --max-height")
		}
		return env.flags().CheckAddress(fs, "listen")
	})
	if err != nil {
		return err
	}
	if !archival && cfg.GCWindow == 0 {
		cfg.GCWindow = 5 * cfg.EpochLength // nearcore's gc_num_epochs_to_keep
	}
	cfg.Faults.Seed = cfg.Seed
	node, err := sim.New(ctx, cfg, env.logger)
	if err != nil {
		return fmt.Errorf("start simulator: %w", err)
	}
	defer func() { _ = node.Close(context.Background()) }()
	if genesisOut != "" {
		if err := node.WriteGenesis(genesisOut); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", cfg.RPCAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.RPCAddr, err)
	}
	env.logger.Info("simulator listening", "addr", ln.Addr().String(), "seed", cfg.Seed, "shards", cfg.Shards)
	return node.Serve(ctx, ln)
}
