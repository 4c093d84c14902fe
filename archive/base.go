package archive

import (
	"context"
	"errors"
	"fmt"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/store"
)

// Per-account completeness. With a genesis history start every account's
// whole state is in the archive from the genesis height. Otherwise an
// account is complete at height H only when it has a base at or below H
// (store.AccountBase: snapshotted at the start, or created or deleted in an
// indexed block). For an account without one, the archive answers only
// what is exact anyway and forwards the rest (partialQuery).

// coverage is what the archive knows of one account's state at a height.
type coverage struct {
	complete bool
	start    uint64 // where the archive's state history starts
	base     uint64 // where the account's state is complete, when hasBase
	hasBase  bool
}

// accountCoverage decides whether accountID's whole state is in the
// archive at height (at most one primary-key probe).
func (a *Backend) accountCoverage(ctx context.Context, accountID string, height uint64) (coverage, error) {
	hs, err := a.history(ctx)
	if err != nil {
		return coverage{}, err
	}
	cov := coverage{start: hs.height}
	if hs.source == "genesis" {
		cov.complete = true
		return cov, nil
	}
	base, _, err := a.store.AccountBase(ctx, accountID)
	if isNotFound(err) {
		return cov, nil
	}
	if err != nil {
		return coverage{}, fmt.Errorf("read base of account %s: %w", accountID, err)
	}
	cov.base, cov.hasBase = base, true
	cov.complete = base <= height
	return cov, nil
}

// NoAccountState is the reason a query about an account whose state the
// archive does not wholly hold at the block cannot be answered without an
// upstream node.
func NoAccountState(accountID string, at near.BlockStamp, cov coverage) *near.Error {
	if cov.hasBase {
		return near.HandlerError("UNKNOWN_BLOCK", nil, fmt.Sprintf(
			"This archive has no complete state of account %s before block #%d (block #%d asked; the archive starts at block #%d) and no upstream node is configured to forward to",
			accountID, cov.base, at.BlockHeight, cov.start))
	}
	return near.HandlerError("UNKNOWN_BLOCK", nil, fmt.Sprintf(
		"This archive has no complete state of account %s at block #%d: it starts at block #%d and holds the whole state only of accounts snapshotted there or created since, and no upstream node is configured to forward to",
		accountID, at.BlockHeight, cov.start))
}

// partialQuery answers a query about an account the archive does not wholly
// hold at the block: view_account once the archive has stored a change of
// the account (an account_update carries the whole account), view_code when
// that account has no contract or its code (by hash) is stored,
// view_access_key once the archive has stored a change of that key;
// everything else, and those before the first change, is forwarded.
func (a *Backend) partialQuery(ctx context.Context, req near.QueryRequest, at near.BlockStamp, cov coverage) (any, error) {
	forward := &rpcserve.ForwardError{Reason: NoAccountState(req.AccountID, at, cov)}
	if req.RequestType == near.QueryViewAccessKey {
		// An access_key_update carries the whole key; a deletion removes it.
		key, err := a.store.AccessKeyAt(ctx, req.AccountID, req.PublicKey, at.BlockHeight)
		switch {
		case errors.Is(err, store.ErrDeleted):
			return nil, near.UnknownAccessKey(req.PublicKey, at)
		case err != nil:
			return nil, readFailed(err, forward.Reason, fmt.Sprintf("read access key %s of %s at %d", req.PublicKey, req.AccountID, at.BlockHeight))
		}
		return near.AccessKeyResult{AccessKeyView: key, BlockStamp: at}, nil
	}
	if req.RequestType != near.QueryViewAccount && req.RequestType != near.QueryViewCode {
		return nil, forward
	}
	acc, err := a.store.AccountAt(ctx, req.AccountID, at.BlockHeight)
	switch {
	case errors.Is(err, store.ErrDeleted):
		return nil, near.UnknownAccount(req.AccountID, at)
	case err != nil:
		return nil, readFailed(err, forward.Reason, fmt.Sprintf("read account %s at %d", req.AccountID, at.BlockHeight))
	}
	if req.RequestType == near.QueryViewAccount {
		return near.AccountView{Account: acc, BlockStamp: at}, nil
	}
	if _, global := acc.GlobalContract(); global {
		// Global code does not depend on the account's history: it is
		// exact when the archive saw it distributed, else forwarded.
		code, hash, _, err := a.code(ctx, req.AccountID, acc, at)
		if err != nil {
			return nil, err
		}
		return near.ContractCodeView{CodeBase64: code, Hash: hash, BlockStamp: at}, nil
	}
	if acc.CodeHash == noCodeHash {
		return nil, near.NoContractCode(req.AccountID, at)
	}
	code, ok := a.codes.get(acc.CodeHash)
	if !ok {
		code, err = a.store.CodeByHash(ctx, acc.CodeHash)
		if isNotFound(err) {
			return nil, forward
		}
		if err != nil {
			return nil, fmt.Errorf("read contract code %s: %w", acc.CodeHash, err)
		}
		a.codes.put(acc.CodeHash, code)
	}
	return near.ContractCodeView{CodeBase64: code, Hash: acc.CodeHash, BlockStamp: at}, nil
}
