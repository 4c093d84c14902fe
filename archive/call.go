package archive

import (
	"context"
	"errors"
	"fmt"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
)

// callFunction runs a view call against the contract state at the block.
//
// The call context follows nearcore's view calls: signer and predecessor
// are the contract, the signer key is an empty ED25519 key, no deposit, the
// view gas limit. Values the archive does not store are approximated: the
// epoch height counts fixed-length epochs from genesis, validator stakes are
// the genesis validators', and the random seed is the block header's
// prev_state_root (nearcore uses the shard's state root after the block).
func (a *Backend) callFunction(ctx context.Context, req near.QueryRequest, at near.BlockStamp) (any, error) {
	acc, err := a.account(ctx, req.AccountID, at)
	if err != nil {
		return nil, err
	}
	code, codeHash, found, err := a.code(ctx, req.AccountID, acc, at)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, near.CodeDoesNotExist(req.AccountID, at)
	}
	if a.vm == nil {
		return nil, errors.New("call function: no contract runtime configured")
	}
	header, err := a.header(ctx, at.BlockHeight)
	if err != nil {
		return nil, err
	}
	genesis, err := a.genesis(ctx)
	if err != nil {
		return nil, err
	}
	seed, err := near.Base58Decode(header.PrevStateRoot)
	if err != nil || len(seed) != 32 {
		seed = make([]byte, 32)
	}
	call := nearvm.Context{
		CurrentAccountID:     req.AccountID,
		SignerAccountID:      req.AccountID,
		SignerAccountPK:      make([]byte, 33), // ED25519 type byte 0, 32 zero bytes
		PredecessorAccountID: req.AccountID,
		Input:                req.Args,
		BlockHeight:          at.BlockHeight,
		BlockTimestamp:       header.Timestamp,
		EpochHeight:          genesis.epochHeight(at.BlockHeight),
		StorageUsage:         acc.StorageUsage,
		AccountBalance:       nearvm.U128{Hi: acc.Amount.Hi, Lo: acc.Amount.Lo},
		AccountLockedBalance: nearvm.U128{Hi: acc.Locked.Hi, Lo: acc.Locked.Lo},
		RandomSeed:           seed,
		View:                 true,
		Validators:           genesis.stakes,
	}
	st := &historyStorage{store: a.store, accountID: req.AccountID, height: at.BlockHeight}
	out, err := a.vm.Call(ctx, code, codeHash, req.MethodName, call, st)
	var fce *nearvm.FunctionCallError
	if errors.As(err, &fce) {
		return nil, near.NewContractError(fce, at)
	}
	if err != nil {
		return nil, fmt.Errorf("call %s.%s at %d: %w", req.AccountID, req.MethodName, at.BlockHeight, err)
	}
	logs := out.Logs
	if logs == nil {
		logs = []string{}
	}
	return near.CallResult{Result: near.ByteArray(out.ReturnData), Logs: logs, BlockStamp: at}, nil
}

// historyStorage is a contract's state at one height, read from the
// archive's history (nearvm caches each key per call).
type historyStorage struct {
	store     Store
	accountID string
	height    uint64
}

func (s *historyStorage) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	value, err := s.store.ContractDataAt(ctx, s.accountID, key, s.height)
	if isNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read state key of %s at %d: %w", s.accountID, s.height, err)
	}
	return value, true, nil
}
