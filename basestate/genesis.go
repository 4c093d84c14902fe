package basestate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
)

// RPC calls an upstream node (*upstream.Client implements it).
type RPC interface {
	CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// Sink stores state known without a block: genesis records or an
// account snapshot (*store.Store implements it).
type Sink interface {
	PutBaseState(ctx context.Context, height uint64, changes []bundle.StateChange) error
	PutAccountSnapshot(ctx context.Context, height uint64, accountID string, changes []bundle.StateChange) error
	SetHistoryStart(ctx context.Context, height uint64, source string) error
}

var _ Sink = (*store.Store)(nil)

// genesisBatch is the number of records written per transaction.
const genesisBatch = 5000

// LoadGenesis reads a nearcore genesis.json token by token (mainnet's is
// large: records are never all in memory), stores its Account, AccessKey,
// Contract and Data records as the state at the genesis height, records that
// height as the start of history, and returns it. Other record kinds
// (receipts in flight) are counted and skipped.
func LoadGenesis(ctx context.Context, r io.Reader, sink Sink, logger *slog.Logger) (uint64, error) {
	logger = logs.OrDiscard(logger)
	dec := json.NewDecoder(r)
	if err := jsonobject.ExpectDelim(dec, '{'); err != nil {
		return 0, fmt.Errorf("read genesis: %w", err)
	}
	var (
		height     *uint64
		pending    []bundle.StateChange
		stored     int
		skipped    int
		sawRecords bool
	)
	// Records may come before genesis_height in the file; keep them until
	// the height is known (nearcore writes the config first).
	var early [][]bundle.StateChange
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if height == nil {
			early = append(early, pending)
			pending = nil
			return nil
		}
		if err := sink.PutBaseState(ctx, *height, pending); err != nil {
			return err
		}
		stored += len(pending)
		pending = nil
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, fmt.Errorf("read genesis key: %w", err)
		}
		key, _ := tok.(string)
		switch key {
		case "genesis_height":
			var h uint64
			if err := dec.Decode(&h); err != nil {
				return 0, fmt.Errorf("read genesis_height: %w", err)
			}
			height = &h
		case "records":
			sawRecords = true
			if err := jsonobject.ExpectDelim(dec, '['); err != nil {
				return 0, fmt.Errorf("read genesis records: %w", err)
			}
			for dec.More() {
				var rec near.StateRecord
				if err := dec.Decode(&rec); err != nil {
					return 0, fmt.Errorf("read genesis record %d: %w", stored+len(pending)+skipped, err)
				}
				change, ok := recordChange(rec)
				if !ok {
					skipped++
					continue
				}
				pending = append(pending, change)
				if len(pending) >= genesisBatch {
					if err := flush(); err != nil {
						return 0, err
					}
				}
			}
			if err := jsonobject.ExpectDelim(dec, ']'); err != nil {
				return 0, fmt.Errorf("read genesis records: %w", err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, fmt.Errorf("read genesis field %q: %w", key, err)
			}
		}
	}
	if height == nil {
		return 0, errors.New("read genesis: no genesis_height")
	}
	if !sawRecords {
		return 0, errors.New("read genesis: no records (records_file genesis files are not supported)")
	}
	for _, batch := range early {
		if err := sink.PutBaseState(ctx, *height, batch); err != nil {
			return 0, err
		}
		stored += len(batch)
	}
	if err := flush(); err != nil {
		return 0, err
	}
	if err := sink.SetHistoryStart(ctx, *height, "genesis"); err != nil {
		return 0, err
	}
	logger.Info("genesis state loaded", "height", *height, "records", stored, "skipped_records", skipped)
	return *height, nil
}

// recordChange turns a genesis record into the state change that would
// have created it. Members of an account or access key that Nearline does
// not model travel in their Extra.
func recordChange(rec near.StateRecord) (bundle.StateChange, bool) {
	cause := near.StateChangeCauseView{Type: "initial_state"}
	var v near.StateChangeWithCauseView
	switch {
	case rec.Account != nil:
		a := rec.Account.Account
		v = near.StateChangeWithCauseView{Cause: cause, Type: near.ChangeAccountUpdate, Change: near.StateChangeValue{
			AccountID: rec.Account.AccountID,
			Account: &near.Account{Amount: a.Amount, Locked: a.Locked, CodeHash: a.CodeHash, StorageUsage: a.StorageUsage,
				Extra: a.Extra}}}
	case rec.AccessKey != nil:
		pk, key := rec.AccessKey.PublicKey, rec.AccessKey.AccessKey
		v = near.StateChangeWithCauseView{Cause: cause, Type: near.ChangeAccessKeyUpdate, Change: near.StateChangeValue{
			AccountID: rec.AccessKey.AccountID, PublicKey: &pk, AccessKey: &key}}
	case rec.Contract != nil:
		code := rec.Contract.Code
		v = near.StateChangeWithCauseView{Cause: cause, Type: near.ChangeContractCodeUpdate, Change: near.StateChangeValue{
			AccountID: rec.Contract.AccountID, CodeBase64: &code}}
	case rec.Data != nil:
		key, value := rec.Data.DataKey, rec.Data.Value
		v = near.StateChangeWithCauseView{Cause: cause, Type: near.ChangeDataUpdate, Change: near.StateChangeValue{
			AccountID: rec.Data.AccountID, KeyBase64: &key, ValueBase64: &value}}
	default:
		return bundle.StateChange{}, false
	}
	return bundle.StateChange{View: v}, true
}
