package upstream

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
)

// RPC calls an upstream node (*Client implements it). The sources and
// the indexer's wiring hand it around, so a test or a benchmark can put a
// counter or a fake in its place.
type RPC interface {
	CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error)
}

var _ RPC = (*Client)(nil)

// Limit returns rpc letting at most n calls reach the upstream at once;
// n < 1 returns rpc unbounded.
func Limit(rpc RPC, n int) RPC {
	if n < 1 {
		return rpc
	}
	return limitedRPC{next: rpc, slots: make(chan struct{}, n)}
}

// limitedRPC lets at most cap(slots) calls reach the upstream at once.
type limitedRPC struct {
	next  RPC
	slots chan struct{}
}

func (l limitedRPC) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-l.slots }()
	return l.next.CallRaw(ctx, method, params)
}

// FinalHead returns the height of rpc's latest final block.
func FinalHead(ctx context.Context, rpc RPC) (uint64, error) {
	raw, err := rpc.CallRaw(ctx, "block", map[string]string{"finality": near.FinalityFinal})
	if err != nil {
		return 0, err
	}
	h, err := near.HeaderHeight(raw)
	if err != nil {
		return 0, fmt.Errorf("decode final block: %w", err)
	}
	return h, nil
}

// GenesisConfig returns rpc's genesis_config result.
func GenesisConfig(ctx context.Context, rpc RPC) (json.RawMessage, error) {
	return rpc.CallRaw(ctx, "genesis_config", nil)
}

// FetchProtocolConfig fetches EXPERIMENTAL_protocol_config at the block
// with hash, of epoch.
func FetchProtocolConfig(ctx context.Context, rpc RPC, epoch, hash string) (*bundle.ProtocolConfig, error) {
	raw, err := rpc.CallRaw(ctx, "EXPERIMENTAL_protocol_config", map[string]string{"block_id": hash})
	if err != nil {
		return nil, fmt.Errorf("fetch protocol config: %w", err)
	}
	var cfg struct {
		ProtocolVersion uint32 `json:"protocol_version"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("decode protocol config: %w", err)
	}
	return &bundle.ProtocolConfig{EpochID: epoch, ProtocolVersion: cfg.ProtocolVersion, JSON: raw}, nil
}

// ConfigShardIDs returns the shard ids, by index, of the shard layout of an
// EXPERIMENTAL_protocol_config result; nil when it has none Nearline reads.
func ConfigShardIDs(raw json.RawMessage) []uint64 {
	var cfg struct {
		ShardLayout near.ShardLayout `json:"shard_layout"`
	}
	if json.Unmarshal(raw, &cfg) != nil {
		return nil
	}
	return cfg.ShardLayout.ShardIDs()
}
