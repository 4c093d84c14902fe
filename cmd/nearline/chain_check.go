package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nearline/nearline/basestate"
	"github.com/nearline/nearline/chain"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/outage"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/upstream"
)

// upstreamCalls runs the start-up calls to the upstream as the indexer
// runs its own: through outages, for patience (0: as long as it takes).
type upstreamCalls struct {
	tracker  *outage.Tracker
	patience time.Duration
}

func (u upstreamCalls) do(ctx context.Context, what string, op func(ctx context.Context) error) error {
	return u.tracker.Do(ctx, what, u.patience, op)
}

// checkChain refuses, before anything is written, an upstream of another
// chain than the --genesis file (when it is still to be loaded) or the
// archive, naming both sides; then records the upstream's chain in an
// archive that has none (and the genesis block's hash, once an upstream
// that has that block is asked).
func checkChain(ctx context.Context, env *environment, flags *indexFlags, s *store.Store, src indexer.Source, client *upstream.Client, up upstreamCalls) error {
	var cfg json.RawMessage
	err := up.do(ctx, "genesis_config", func(ctx context.Context) (err error) {
		cfg, err = src.GenesisConfig(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("fetch genesis config: %w", err)
	}
	upChain, err := chain.FromConfig(cfg)
	if err != nil {
		return fmt.Errorf("the upstream's genesis_config: %w", err)
	}
	var upName string
	switch {
	case client == nil:
		upName = fmt.Sprintf("--genesis %s (no --rpc-upstream)", flags.genesis)
	case flags.source == sourceRPC:
		upName = upstreamName(flags.upstream)
	default:
		upName = upstreamName(flags.rpcUpstream)
	}
	if client != nil {
		err := up.do(ctx, "genesis block", func(ctx context.Context) (err error) {
			upChain.GenesisHash, err = client.BlockHash(ctx, upChain.GenesisHeight)
			return err
		})
		switch {
		case upstream.NoBlock(err):
			env.logger.Info("the upstream has no genesis block; the chain is checked by its genesis config", "genesis_height", upChain.GenesisHeight, "err", err)
		case err != nil:
			return fmt.Errorf("fetch the genesis block: %w", err)
		}
	}
	if flags.genesis != "" && client != nil {
		if err := basestate.CheckGenesisFile(ctx, flags.genesis, s, upChain, upName); err != nil {
			return err
		}
	}
	err = s.CheckChain(ctx, upChain, upName)
	if errors.Is(err, chain.ErrOtherChain) {
		return fmt.Errorf("%w; %s", err, flags.db.startOver())
	}
	return err
}
