// Package upstream holds what every source asks an upstream NEAR node
// besides its blocks: the final head, an epoch's protocol config and the
// shard layout in it. The JSON-RPC source and the document sources share
// it, so both read the node the same way.
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
)

// RPC calls an upstream node (*near.Client implements it).
type RPC interface {
	CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error)
}

var _ RPC = (*near.Client)(nil)

// FinalHead returns the height of rpc's latest final block.
func FinalHead(ctx context.Context, rpc RPC) (uint64, error) {
	raw, err := rpc.CallRaw(ctx, "block", map[string]string{"finality": near.FinalityFinal})
	if err != nil {
		return 0, err
	}
	h, err := HeaderHeight(raw)
	if err != nil {
		return 0, fmt.Errorf("decode final block: %w", err)
	}
	return h, nil
}

// HeaderHeight reads header.height from a block view.
func HeaderHeight(block json.RawMessage) (uint64, error) {
	var b struct {
		Header struct {
			Height *uint64 `json:"height"`
		} `json:"header"`
	}
	if err := json.Unmarshal(block, &b); err != nil || b.Header.Height == nil {
		return 0, errors.New("block without header.height")
	}
	return *b.Header.Height, nil
}

// ProtocolConfig fetches EXPERIMENTAL_protocol_config at the block with
// hash, of epoch.
func ProtocolConfig(ctx context.Context, rpc RPC, epoch, hash string) (*store.ProtocolConfig, error) {
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
	return &store.ProtocolConfig{EpochID: epoch, ProtocolVersion: cfg.ProtocolVersion, JSON: raw}, nil
}

// ShardIDs returns the shard ids, by index, of the shard layout of an
// EXPERIMENTAL_protocol_config result; nil when it has none Nearline reads.
func ShardIDs(raw json.RawMessage) []uint64 {
	var cfg struct {
		ShardLayout near.ShardLayout `json:"shard_layout"`
	}
	if json.Unmarshal(raw, &cfg) != nil {
		return nil
	}
	return cfg.ShardLayout.ShardIDs()
}

// Sleep waits d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
