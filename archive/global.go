package archive

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
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
	code, hash, err = a.store.GlobalContractCodeAt(ctx, id, shard, at.BlockHeight)
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
