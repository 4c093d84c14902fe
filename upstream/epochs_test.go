package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// configRPC answers EXPERIMENTAL_protocol_config with a two-shard layout,
// counting the calls, or fails them while fail is set.
type configRPC struct {
	calls atomic.Int32
	fail  atomic.Bool
}

func (c *configRPC) CallRaw(_ context.Context, method string, _ any) (json.RawMessage, error) {
	c.calls.Add(1)
	if c.fail.Load() {
		return nil, errors.New("refused")
	}
	return json.RawMessage(`{"protocol_version":80,"shard_layout":{"V2":{"shard_ids":[3,1]}}}`), nil
}

// TestEpochsClaimOnce: one claim per epoch until it is released or reset;
// a layout is fetched once and kept over a reset.
func TestEpochsClaimOnce(t *testing.T) {
	t.Parallel()
	rpc := &configRPC{}
	e := NewEpochs(rpc)
	require.True(t, e.Claim("a"))
	require.False(t, e.Claim("a"))
	require.True(t, e.Claim("b"))
	e.Release("a")
	require.True(t, e.Claim("a"))
	e.Reset()
	require.True(t, e.Claim("a"))
	require.True(t, e.Claim("b"))

	cfg, err := e.Config(t.Context(), "a", "hash")
	require.NoError(t, err)
	require.EqualValues(t, 80, cfg.ProtocolVersion)
	require.Equal(t, "a", cfg.EpochID)
	ids, err := e.Layout(t.Context(), "a", "hash")
	require.NoError(t, err)
	require.Equal(t, []uint64{3, 1}, ids)
	require.EqualValues(t, 1, rpc.calls.Load(), "the layout of a fetched config is not fetched again")

	rpc.fail.Store(true)
	_, err = e.Layout(t.Context(), "c", "hash")
	require.ErrorContains(t, err, "fetch protocol config: refused")
	e.Reset()
	ids, err = e.Layout(t.Context(), "a", "hash")
	require.NoError(t, err, "a reset keeps the layouts")
	require.Equal(t, []uint64{3, 1}, ids)
}
