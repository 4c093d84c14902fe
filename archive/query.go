package archive

import (
	"context"
	"fmt"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
)

// noCodeHash is the code_hash of an account without a contract.
const noCodeHash = "11111111111111111111111111111111"

// proofNotServed is the error for a view_state with include_proof when no
// upstream is configured: the archive keeps values, not the trie.
func proofNotServed() *near.Error {
	return near.HandlerError("NOT_SERVED", map[string]string{"request_type": near.QueryViewState},
		"view_state with include_proof needs the state trie, which this archive does not keep, and no upstream node is configured to forward it to")
}

// query answers `query` from the state history at the selected block.
func (a *Backend) query(ctx context.Context, req near.QueryRequest) (any, error) {
	switch {
	case req.RequestType == near.QueryViewGlobalContractCode, req.RequestType == near.QueryViewGlobalContractCodeByAccountID:
		return a.viewGlobalCode(ctx, req)
	case req.RequestType == near.QueryViewState && req.IncludeProof:
		// The proof is the trie nodes on the way to the values, which
		// only a node holding the trie has: forwarded, never answered
		// without the proof asked for.
		return nil, &rpcserve.ForwardError{Reason: proofNotServed()}
	}
	at, err := a.resolve(ctx, req.Block, queryFlavor)
	if err != nil {
		return nil, err
	}
	cov, err := a.accountCoverage(ctx, req.AccountID, at.BlockHeight)
	if err != nil {
		return nil, err
	}
	if !cov.complete {
		return a.partialQuery(ctx, req, at, cov)
	}
	switch req.RequestType {
	case near.QueryViewAccount:
		acc, err := a.account(ctx, req.AccountID, at)
		if err != nil {
			return nil, err
		}
		return near.AccountView{Account: acc, BlockStamp: at}, nil
	case near.QueryViewCode:
		return a.viewCode(ctx, req.AccountID, at)
	case near.QueryViewState:
		return a.viewState(ctx, req.AccountID, req.Prefix, at)
	case near.QueryViewAccessKey:
		key, err := a.store.AccessKeyAt(ctx, req.AccountID, req.PublicKey, at.BlockHeight)
		if isNotFound(err) {
			return nil, near.UnknownAccessKey(req.PublicKey, at)
		}
		if err != nil {
			return nil, fmt.Errorf("read access key %s of %s at %d: %w", req.PublicKey, req.AccountID, at.BlockHeight, err)
		}
		return near.AccessKeyResult{AccessKeyView: key, BlockStamp: at}, nil
	case near.QueryViewAccessKeyList:
		keys, err := a.store.AccessKeysAt(ctx, req.AccountID, at.BlockHeight)
		if err != nil {
			return nil, fmt.Errorf("read access keys of %s at %d: %w", req.AccountID, at.BlockHeight, err)
		}
		if keys == nil {
			keys = []near.AccessKeyInfoView{}
		}
		return near.AccessKeyListView{Keys: keys, BlockStamp: at}, nil
	case near.QueryCallFunction:
		return a.callFunction(ctx, req, at)
	}
	return nil, near.ParseError(fmt.Sprintf("Failed parsing args: unknown request_type %q", req.RequestType))
}

// account reads an account, UNKNOWN_ACCOUNT when it does not exist.
func (a *Backend) account(ctx context.Context, accountID string, at near.BlockStamp) (near.Account, error) {
	acc, err := a.store.AccountAt(ctx, accountID, at.BlockHeight)
	if isNotFound(err) {
		return near.Account{}, near.UnknownAccount(accountID, at)
	}
	if err != nil {
		return near.Account{}, fmt.Errorf("read account %s at %d: %w", accountID, at.BlockHeight, err)
	}
	return acc, nil
}

// code reads an account's contract code; found is false when it has none.
func (a *Backend) code(ctx context.Context, accountID string, acc near.Account, at near.BlockStamp) (code []byte, hash string, found bool, err error) {
	if id, ok := acc.GlobalContract(); ok {
		code, hash, err := a.accountGlobalCode(ctx, accountID, id, at)
		return code, hash, err == nil, err
	}
	if acc.CodeHash == noCodeHash {
		return nil, "", false, nil
	}
	if cached, ok := a.codes.get(acc.CodeHash); ok {
		return cached, acc.CodeHash, true, nil
	}
	code, hash, err = a.store.ContractCodeAt(ctx, accountID, at.BlockHeight)
	if isNotFound(err) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("read contract code of %s at %d: %w", accountID, at.BlockHeight, err)
	}
	if hash == acc.CodeHash {
		a.codes.put(hash, code)
	}
	return code, hash, true, nil
}

func (a *Backend) viewCode(ctx context.Context, accountID string, at near.BlockStamp) (any, error) {
	acc, err := a.account(ctx, accountID, at)
	if err != nil {
		return nil, err
	}
	code, hash, found, err := a.code(ctx, accountID, acc, at)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, near.NoContractCode(accountID, at)
	}
	return near.ContractCodeView{CodeBase64: code, Hash: hash, BlockStamp: at}, nil
}

// viewState applies nearcore's limit: the account's storage usage minus its
// code size must not exceed ViewStateLimit.
func (a *Backend) viewState(ctx context.Context, accountID string, prefix []byte, at near.BlockStamp) (any, error) {
	acc, err := a.account(ctx, accountID, at)
	if err != nil {
		return nil, err
	}
	// Only local code counts (nearcore subtracts the local code's length);
	// an account that uses global code has none. Only an account whose
	// whole storage exceeds the limit needs its code size to decide.
	if limit := a.cfg.ViewStateLimit; limit > 0 && acc.StorageUsage > uint64(limit) {
		usage := acc.StorageUsage
		if _, global := acc.GlobalContract(); !global {
			code, _, _, err := a.code(ctx, accountID, acc, at)
			if err != nil {
				return nil, err
			}
			usage -= min(usage, uint64(len(code)))
		}
		if usage > uint64(limit) {
			return nil, near.TooLargeContractState(accountID, at)
		}
	}
	items, err := a.store.ContractStateAt(ctx, accountID, prefix, at.BlockHeight, 0)
	if err != nil {
		return nil, fmt.Errorf("read state of %s at %d: %w", accountID, at.BlockHeight, err)
	}
	if items == nil {
		items = []near.StateItem{}
	}
	return near.ViewStateResult{Values: items, BlockStamp: at}, nil
}
