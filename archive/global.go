package archive

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/store"
)

// Global contracts: an account that uses one runs the global code as it
// was on the account's shard at the block; view_global_contract_code reads
// the first shard of the layout, as nearcore does. Which shard an account
// is on comes from the shard layout of the protocol config at the block.

// layoutAt returns the shard layout in force at height.
func (a *Backend) layoutAt(ctx context.Context, height uint64) (near.ShardLayout, error) {
	raw, err := a.store.ProtocolConfigAt(ctx, height)
	if isNotFound(err) {
		raw, err = a.store.GenesisConfig(ctx)
	}
	if err != nil {
		return near.ShardLayout{}, fmt.Errorf("read shard layout at %d: %w", height, err)
	}
	var cfg struct {
		ShardLayout near.ShardLayout `json:"shard_layout"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return near.ShardLayout{}, fmt.Errorf("decode shard layout at %d: %w", height, err)
	}
	return cfg.ShardLayout, nil
}

// globalCode reads the global code id names on shard at the block; found
// is false when it had not reached the shard.
func (a *Backend) globalCode(ctx context.Context, id near.GlobalContractID, shard uint64, at near.BlockStamp) (code []byte, hash string, found bool, err error) {
	windows, err := a.shardWindows(ctx, shard, at.BlockHeight)
	if err != nil {
		return nil, "", false, err
	}
	code, hash, err = a.store.GlobalContractCodeIn(ctx, id, windows)
	if isNotFound(err) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("read global contract %s at %d: %w", id.Value(), at.BlockHeight, err)
	}
	return code, hash, true, nil
}

// accountGlobalCode reads the global code an account that uses id runs.
// Global code never disappears from a shard once there, and an account can
// only use code its shard has, so code the archive lacks means the archive
// did not index its distribution: the request is forwarded or refused.
func (a *Backend) accountGlobalCode(ctx context.Context, accountID string, id near.GlobalContractID, at near.BlockStamp) ([]byte, string, error) {
	layout, err := a.layoutAt(ctx, at.BlockHeight)
	if err != nil {
		return nil, "", err
	}
	code, hash, found, err := a.globalCode(ctx, id, layout.ShardIDOf(accountID), at)
	if err != nil {
		return nil, "", err
	}
	if !found {
		return nil, "", &rpcserve.ForwardError{Reason: near.InternalError(fmt.Sprintf(
			"The global contract code %s uses (%s %s) at block #%d is not in the archive", accountID, id.Kind(), id.Value(), at.BlockHeight))}
	}
	return code, hash, nil
}

// viewGlobalCode answers view_global_contract_code(_by_account_id).
func (a *Backend) viewGlobalCode(ctx context.Context, req near.QueryRequest) (any, error) {
	at, err := a.resolve(ctx, req.Block, queryFlavor)
	if err != nil {
		return nil, err
	}
	id := near.GlobalContractID{CodeHash: req.CodeHash, AccountID: req.AccountID}
	layout, err := a.layoutAt(ctx, at.BlockHeight)
	if err != nil {
		return nil, err
	}
	code, hash, found, err := a.globalCode(ctx, id, layout.FirstShardID(), at)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, near.NoGlobalContractCode(id, at)
	}
	return near.ContractCodeView{CodeBase64: code, Hash: hash, BlockStamp: at}, nil
}

// shardWindows lists where global code on shard at height may have come
// from (store.ShardWindow): the shard's own distributions and, for a shard
// born of a split, its parent's up to the split (both children start with
// the parent's state) and, for the left child, distributions still
// targeted at the parent that it executed after the split (nearcore hands
// a receipt for a split shard to its first child); then the parent's
// parent, and so on. The splits come from the stored protocol configs'
// layouts.
func (a *Backend) shardWindows(ctx context.Context, shard, height uint64) ([]store.ShardWindow, error) {
	windows := []store.ShardWindow{{Target: shard, Exec: shard, To: height}}
	spans, err := a.store.ShardLayouts(ctx)
	if err != nil {
		return nil, err
	}
	cur, end := shard, height
	for {
		k := slices.IndexFunc(spans, func(s store.LayoutSpan) bool { return slices.Contains(s.Layout.ShardIDs(), cur) })
		if k <= 0 || spans[k].FirstHeight == 0 || spans[k].FirstHeight > end {
			return windows, nil
		}
		parent, ok := spans[k].Layout.ParentOf(cur)
		if !ok {
			return windows, nil
		}
		split := spans[k].FirstHeight
		windows = append(windows, store.ShardWindow{Target: parent, Exec: parent, To: split - 1})
		if left := slices.Index(spans[k].Layout.ShardIDs(), cur); left == slices.Index(spans[k-1].Layout.ShardIDs(), parent) {
			windows = append(windows, store.ShardWindow{Target: parent, Exec: cur, From: split, To: end})
		}
		cur, end = parent, split-1
	}
}
