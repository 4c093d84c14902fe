package basestate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/near"
)

// Snapshot fetches the state of the named accounts at height (view_account,
// view_access_key_list, view_code, view_state) and stores it as the base of
// their history and as each account's base, recording height as the start
// of history. Accounts that do not exist at height are logged and recorded
// with an empty base. The upstream must still hold
// the state at height (an archival node for old heights), and view_state must
// fit its size limit.
func Snapshot(ctx context.Context, rpc RPC, sink Sink, height uint64, accounts []string, logger *slog.Logger) error {
	logger = logs.OrDiscard(logger)
	cause := near.StateChangeCauseView{Type: "initial_state"}
	for _, id := range accounts {
		changes, err := snapshotAccount(ctx, rpc, height, id, cause)
		if err != nil {
			return fmt.Errorf("snapshot %s at %d: %w", id, height, err)
		}
		if changes == nil {
			// Its empty state is exact too: recorded as its base.
			logger.Warn("snapshot account does not exist", "account_id", id, "height", height)
		}
		if err := sink.PutAccountSnapshot(ctx, height, id, changes); err != nil {
			return err
		}
		logger.Info("snapshot account stored", "account_id", id, "height", height, "entries", len(changes))
	}
	return sink.SetHistoryStart(ctx, height, "snapshot")
}

func query(ctx context.Context, rpc RPC, height uint64, requestType, accountID string, extra map[string]any, out any) error {
	params := map[string]any{"request_type": requestType, "block_id": height, "account_id": accountID}
	for k, v := range extra {
		params[k] = v
	}
	raw, err := rpc.CallRaw(ctx, "query", params)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode %s: %w", requestType, err)
	}
	return nil
}

func causeIs(err error, name string) bool {
	var ne *near.Error
	return errors.As(err, &ne) && ne.CauseName() == name
}

func snapshotAccount(ctx context.Context, rpc RPC, height uint64, id string, cause near.StateChangeCauseView) ([]bundle.StateChange, error) {
	var acc near.AccountView
	if err := query(ctx, rpc, height, "view_account", id, nil, &acc); err != nil {
		if causeIs(err, "UNKNOWN_ACCOUNT") {
			return nil, nil
		}
		return nil, fmt.Errorf("view_account: %w", err)
	}
	account := acc.Account
	out := []bundle.StateChange{{View: near.StateChangeWithCauseView{Cause: cause, Type: near.ChangeAccountUpdate,
		Change: near.StateChangeValue{AccountID: id, Account: &account}}}}

	var keys near.AccessKeyListView
	if err := query(ctx, rpc, height, "view_access_key_list", id, nil, &keys); err != nil {
		return nil, fmt.Errorf("view_access_key_list: %w", err)
	}
	for _, k := range keys.Keys {
		pk, key := k.PublicKey, k.AccessKey
		out = append(out, bundle.StateChange{View: near.StateChangeWithCauseView{Cause: cause, Type: near.ChangeAccessKeyUpdate,
			Change: near.StateChangeValue{AccountID: id, PublicKey: &pk, AccessKey: &key}}})
	}

	var code near.ContractCodeView
	err := query(ctx, rpc, height, "view_code", id, nil, &code)
	switch {
	case causeIs(err, "NO_CONTRACT_CODE"):
	case err != nil:
		return nil, fmt.Errorf("view_code: %w", err)
	default:
		c := code.CodeBase64
		out = append(out, bundle.StateChange{View: near.StateChangeWithCauseView{Cause: cause, Type: near.ChangeContractCodeUpdate,
			Change: near.StateChangeValue{AccountID: id, CodeBase64: &c}}})
	}

	var state near.ViewStateResult
	if err := query(ctx, rpc, height, "view_state", id, map[string]any{"prefix_base64": ""}, &state); err != nil {
		return nil, fmt.Errorf("view_state: %w", err)
	}
	for _, item := range state.Values {
		key, value := item.Key, item.Value
		out = append(out, bundle.StateChange{View: near.StateChangeWithCauseView{Cause: cause, Type: near.ChangeDataUpdate,
			Change: near.StateChangeValue{AccountID: id, KeyBase64: &key, ValueBase64: &value}}})
	}
	return out, nil
}
