package rpcsource_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/store/storetest"
	"github.com/nearline/nearline/upstream"
)

// laggingRPC is an upstream whose final head moves only when told; it has
// no block at skippedHeight.
type laggingRPC struct {
	head          atomic.Uint64
	skippedHeight uint64
	calls         atomic.Int64
	// failChanges, while above 0, fails that many changes calls, each
	// once the protocol config has been served.
	failChanges, configs atomic.Int64
	// produceOnMiss, when set, is the head a block call the upstream
	// cannot answer yet moves it to: the upstream produces blocks between
	// two calls, as a node catching up (or a restarted one) does.
	produceOnMiss atomic.Uint64
}

var _ upstream.RPC = (*laggingRPC)(nil)

func (r *laggingRPC) CallRaw(_ context.Context, method string, params any) (json.RawMessage, error) {
	r.calls.Add(1)
	p, _ := params.(map[string]uint64)
	switch method {
	case "block":
		if ps, ok := params.(map[string]string); ok && ps["finality"] != "" {
			return json.RawMessage(fmt.Sprintf(`{"header":{"height":%d}}`, r.head.Load())), nil
		}
		h, ok := p["block_id"]
		if !ok || h > r.head.Load() || h == r.skippedHeight {
			if next := r.produceOnMiss.Load(); next > r.head.Load() {
				r.head.Store(next)
			}
			return nil, near.UnknownBlock(near.HeightID(h))
		}
		return json.RawMessage(fmt.Sprintf(`{"author":"a","header":{"height":%d,"hash":%q,"epoch_id":"e"},"chunks":[]}`,
			h, storetest.BlockHash(h))), nil
	case "EXPERIMENTAL_changes_in_block":
		if r.failChanges.Add(-1) >= 0 {
			wait.Until(10*time.Second, func() bool { return r.configs.Load() > 0 })
			return nil, fmt.Errorf("an outage: %w", upstream.ErrUnavailable)
		}
		return json.RawMessage(`{"block_hash":"x","changes":[]}`), nil
	case "EXPERIMENTAL_protocol_config":
		r.configs.Add(1)
		return json.RawMessage(`{"protocol_version":73}`), nil
	}
	return nil, errors.New("unexpected method " + method)
}

func TestNodeSourceWaitsForALaggingUpstream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rpc := &laggingRPC{skippedHeight: 7}
	rpc.head.Store(5)
	src := simtest.NodeSource(t, rpc, rpcsource.Config{Waits: upstream.Waits{TxPollInterval: time.Millisecond}})

	// Height 7 is skipped and the upstream is past it: no block.
	rpc.head.Store(9)
	_, err := src.Bundle(ctx, 7)
	require.ErrorIs(t, err, bundle.ErrNoBlock)

	// Height 12 is above this upstream's head: not reported as skipped, but
	// asked again until the upstream has it.
	// The head moves once the source has asked a few times without it.
	asked := rpc.calls.Load()
	go func() {
		wait.Until(10*time.Second, func() bool { return rpc.calls.Load() >= asked+3 })
		rpc.head.Store(12)
	}()
	b, err := src.Bundle(ctx, 12)
	require.NoError(t, err)
	require.Equal(t, uint64(12), b.Height())

	// The block is produced between the source's two calls: UNKNOWN_BLOCK,
	// then a final head above it. A height the head passed after the block
	// was asked for is asked again, not taken as skipped.
	rpc.produceOnMiss.Store(30)
	b, err = src.Bundle(ctx, 25)
	require.NoError(t, err, "a block produced between the block call and the head call is no skipped height")
	require.Equal(t, uint64(25), b.Height())
	rpc.produceOnMiss.Store(0)

	// An upstream that never catches up is an error, not a skipped height.
	src = simtest.NodeSource(t, rpc, rpcsource.Config{Waits: upstream.Waits{TxPollInterval: time.Millisecond, BehindRetries: 3}})
	_, err = src.Bundle(ctx, 40)
	require.Error(t, err)
	require.NotErrorIs(t, err, bundle.ErrNoBlock)
	require.ErrorContains(t, err, "still below it")
}

// TestNodeSourceRefetchedBundleCarriesItsEpochConfig: the first bundle of
// an epoch carries its protocol config; when that bundle fails after the
// config came (an outage), the bundle fetched again in its place carries
// it, else the epoch would never have its config stored.
func TestNodeSourceRefetchedBundleCarriesItsEpochConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rpc := &laggingRPC{}
	rpc.head.Store(5)
	rpc.failChanges.Store(1)
	src := simtest.NodeSource(t, rpc, rpcsource.Config{Waits: upstream.Waits{TxPollInterval: time.Millisecond}})
	_, err := src.Bundle(ctx, 3)
	require.Error(t, err)
	require.Equal(t, int64(1), rpc.configs.Load(), "the failed bundle had fetched the config")
	b, err := src.Bundle(ctx, 3)
	require.NoError(t, err)
	require.NotNil(t, b.ProtocolConfig, "the bundle fetched again carries the epoch's config")
	b, err = src.Bundle(ctx, 4)
	require.NoError(t, err)
	require.Nil(t, b.ProtocolConfig, "once delivered, the epoch's config is not attached again")
}

var _ indexer.Source = (*rpcsource.Source)(nil)
