package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/near"
)

// The state family: a block's changes and effects as served, packed, and
// its changes' typed columns as arrays in upstream order (block_changes;
// the view state_changes has a row per change), and the state history, one
// row per changed key per block holding the value after it.

var stateTables = []table{
	{name: "block_changes", heightColumn: "block_height", rows: func(r *rowSet) [][]any { return r.changeDocs },
		columns: []string{"block_height", "changes", "effects", "account_ids", "change_types", "cause_types",
			"cause_receipt_hashes"}},
	{name: "account_history_ids", named: true, rows: func(r *rowSet) [][]any { return r.accounts },
		conflict: `ON CONFLICT (account, block_height) DO UPDATE SET deleted = EXCLUDED.deleted,
			amount = EXCLUDED.amount, locked = EXCLUDED.locked, code_hash = EXCLUDED.code_hash,
			storage_usage = EXCLUDED.storage_usage, storage_paid_at = EXCLUDED.storage_paid_at, extra = EXCLUDED.extra,
			global_contract_hash = EXCLUDED.global_contract_hash, global_contract_account_id = EXCLUDED.global_contract_account_id`,
		columns: []string{"account", "block_height", "deleted", "amount", "locked", "code_hash", "storage_usage", "storage_paid_at", "extra",
			"global_contract_hash", "global_contract_account_id"}},
	{name: "access_key_history_ids", named: true, rows: func(r *rowSet) [][]any { return r.accessKeys },
		conflict: `ON CONFLICT (account, public_key, block_height) DO UPDATE SET deleted = EXCLUDED.deleted,
			nonce = EXCLUDED.nonce, permission = EXCLUDED.permission, extra = EXCLUDED.extra`,
		columns: []string{"account", "public_key", "block_height", "deleted", "nonce", "permission", "extra"}},
	{name: "contract_data_history_ids", named: true, rows: func(r *rowSet) [][]any { return r.data },
		conflict: `ON CONFLICT (account, data_key, block_height) DO UPDATE SET deleted = EXCLUDED.deleted,
			value = EXCLUDED.value`,
		columns: []string{"account", "data_key", "block_height", "deleted", "value"}},
	{name: "contract_code_history_ids", named: true, rows: func(r *rowSet) [][]any { return r.codeHistory },
		conflict: `ON CONFLICT (account, block_height) DO UPDATE SET deleted = EXCLUDED.deleted,
			code_hash = EXCLUDED.code_hash`,
		columns: []string{"account", "block_height", "deleted", "code_hash"}},
	{name: "contract_codes", rows: func(r *rowSet) [][]any { return r.codes },
		conflict: "ON CONFLICT (code_hash) DO NOTHING", columns: []string{"code_hash", "code"}},
}

// historyKey names one state entry: an account, an access key, a data key or
// an account's code.
type historyKey struct {
	kind      string // account, access_key, data, code
	accountID string
	sub       string // public key or data key bytes
}

// errUnknownChangeType marks a state change type Nearline does not model: the
// change is stored in block_changes as it came, and has no history rows.
var errUnknownChangeType = errors.New("unknown state change type")

// changeKind returns the history kind a change type writes, and whether the
// change deletes the entry.
func changeKind(changeType string) (kind string, deleted bool, err error) {
	for _, k := range [...]struct{ kind, update, deletion string }{
		{"account", near.ChangeAccountUpdate, near.ChangeAccountDeletion},
		{"access_key", near.ChangeAccessKeyUpdate, near.ChangeAccessKeyDeletion},
		{"data", near.ChangeDataUpdate, near.ChangeDataDeletion},
		{"code", near.ChangeContractCodeUpdate, near.ChangeContractCodeDeletion},
	} {
		if changeType == k.update || changeType == k.deletion {
			return k.kind, changeType == k.deletion, nil
		}
	}
	return "", false, fmt.Errorf("%w %q", errUnknownChangeType, changeType)
}

// changeColumns are a block's changes' typed columns, in upstream order
// (block_changes' arrays).
type changeColumns struct {
	accounts, types, causes []string
	receipts                []*string
}

// addChanges writes a block's changes row (its changes as served, its
// block effects and the changes' typed columns) and, per changed key, one
// history row holding the value after the block.
func (r *rowSet) addChanges(height int64, changes []bundle.StateChange, effects []near.StateChangeKindView) error {
	texts, cols, err := r.addChangeRows(height, changes)
	if err != nil {
		return err
	}
	r.addBaseCandidates(height, cols)
	if len(changes) == 0 && len(effects) == 0 {
		return nil
	}
	if effects == nil {
		effects = []near.StateChangeKindView{}
	}
	list, err := json.Marshal(effects)
	if err != nil {
		return fmt.Errorf("encode block effects at %d: %w", height, err)
	}
	r.changeDocs = append(r.changeDocs, []any{height, r.codec.Pack(texts), r.codec.Pack([]json.RawMessage{list}),
		cols.accounts, cols.types, cols.causes, cols.receipts})
	return nil
}

// addChangeRows writes the history rows of a block's changes and returns
// each change as served and their typed columns.
func (r *rowSet) addChangeRows(height int64, changes []bundle.StateChange) ([]json.RawMessage, changeColumns, error) {
	last := make(map[historyKey]int, len(changes))
	var order []historyKey
	texts := make([]json.RawMessage, len(changes))
	var cols changeColumns // NULLs for a block without changes
	if len(changes) > 0 {
		cols = changeColumns{accounts: make([]string, len(changes)), types: make([]string, len(changes)),
			causes: make([]string, len(changes)), receipts: make([]*string, len(changes))}
	}
	for i := range changes {
		c := &changes[i]
		v := &c.View
		text, err := rawJSON(c.JSON, v)
		if err != nil {
			return nil, changeColumns{}, fmt.Errorf("encode state change %d at %d: %w", i, height, err)
		}
		texts[i] = text
		kind, _, err := changeKind(v.Type)
		if errors.Is(err, errUnknownChangeType) {
			r.unknown["state_change:"+v.Type]++
		} else if err != nil {
			return nil, changeColumns{}, fmt.Errorf("state change %d at %d: %w", i, height, err)
		}
		var causeReceipt *string
		if v.Cause.ReceiptHash != "" {
			causeReceipt = &v.Cause.ReceiptHash
		}
		var dataKey []byte
		if v.Change.KeyBase64 != nil {
			dataKey = *v.Change.KeyBase64
			if dataKey == nil {
				dataKey = []byte{}
			}
		}
		r.labels.add(labelChangeType, v.Type)
		r.labels.add(labelChangeCause, v.Cause.Type)
		cols.accounts[i], cols.types[i], cols.causes[i], cols.receipts[i] = v.Change.AccountID, v.Type, v.Cause.Type, causeReceipt
		if kind == "" {
			continue // stored above; no history Nearline knows how to keep
		}
		key := historyKey{kind: kind, accountID: v.Change.AccountID}
		switch kind {
		case "access_key":
			if v.Change.PublicKey == nil {
				return nil, changeColumns{}, fmt.Errorf("state change %d at %d: %s without public_key", i, height, v.Type)
			}
			key.sub = *v.Change.PublicKey
		case "data":
			if v.Change.KeyBase64 == nil {
				return nil, changeColumns{}, fmt.Errorf("state change %d at %d: %s without key_base64", i, height, v.Type)
			}
			key.sub = string(dataKey)
		}
		if _, ok := last[key]; !ok {
			order = append(order, key)
		}
		last[key] = i
	}
	for _, key := range order {
		if err := r.addHistory(height, key, &changes[last[key]]); err != nil {
			return nil, changeColumns{}, err
		}
	}
	return texts, cols, nil
}

func (r *rowSet) addHistory(height int64, key historyKey, c *bundle.StateChange) error {
	v := &c.View
	_, deleted, _ := changeKind(v.Type)
	ch := v.Change
	switch key.kind {
	case "account":
		row := []any{accountName(key.accountID), height, deleted, nil, nil, nil, nil, nil, nil, nil, nil}
		var amount any // NULL for a deletion
		if !deleted {
			if ch.Account == nil {
				return fmt.Errorf("account_update of %s at %d without account", key.accountID, height)
			}
			a := ch.Account
			extra := jsonOrNull(a.Extra) // a genesis record's or a snapshot's
			if len(c.JSON) > 0 {
				var err error
				if extra, err = accountExtra(c.JSON); err != nil {
					return fmt.Errorf("account_update of %s at %d: %w", key.accountID, height, err)
				}
			}
			var globalHash, globalAccount *string
			if extra != nil {
				if id, ok := (near.Account{Extra: json.RawMessage(*extra)}).GlobalContract(); ok && id.ByAccount() {
					globalAccount = &id.AccountID
				} else if ok {
					globalHash = &id.CodeHash
				}
			}
			amount = numeric(a.Amount)
			row = []any{accountName(key.accountID), height, false, amount, numeric(a.Locked), a.CodeHash,
				int64(a.StorageUsage), int64(a.StoragePaidAt), extra, globalHash, globalAccount}
		}
		r.accounts = append(r.accounts, row)
		r.addBalanceActivity(accountName(key.accountID), height, amount)
	case "access_key":
		var nonce, permission, extra any // NULL for a deletion
		if !deleted {
			if ch.AccessKey == nil {
				return fmt.Errorf("access_key_update of %s at %d without access_key", key.accountID, height)
			}
			if !ch.AccessKey.Permission.Known() {
				r.unknown["access_key_permission:"+near.VariantName(ch.AccessKey.Permission.Other)]++
			}
			perm, err := json.Marshal(ch.AccessKey.Permission)
			if err != nil {
				return fmt.Errorf("encode permission of %s at %d: %w", key.accountID, height, err)
			}
			nonce, permission, extra = numeric64(ch.AccessKey.Nonce), string(perm), jsonOrNull(ch.AccessKey.Extra)
		}
		r.accessKeys = append(r.accessKeys, []any{accountName(key.accountID), key.sub, height, deleted, nonce, permission, extra})
	case "data":
		var value []byte
		if !deleted {
			if ch.ValueBase64 == nil {
				return fmt.Errorf("data_update of %s at %d without value", key.accountID, height)
			}
			value = *ch.ValueBase64
			if value == nil {
				value = []byte{}
			}
		}
		r.data = append(r.data, []any{accountName(key.accountID), []byte(key.sub), height, deleted, value})
	case "code":
		var codeHash *string
		if !deleted {
			if ch.CodeBase64 == nil {
				return fmt.Errorf("contract_code_update of %s at %d without code", key.accountID, height)
			}
			hash := near.HashOf(*ch.CodeBase64).String()
			codeHash = &hash
			r.addCode(hash, *ch.CodeBase64)
		}
		r.codeHistory = append(r.codeHistory, []any{accountName(key.accountID), height, deleted, codeHash})
	}
	return nil
}

func (r *rowSet) addCode(hash string, code []byte) {
	if r.seenCodes[hash] {
		return
	}
	r.seenCodes[hash] = true
	if code == nil {
		code = []byte{}
	}
	r.codes = append(r.codes, []any{hash, code})
}

// jsonOrNull is the text of a JSON object of extra members for a json
// column, or nil (NULL) when there are none.
func jsonOrNull(extra json.RawMessage) *string {
	if len(extra) <= 2 {
		return nil
	}
	text := string(extra)
	return &text
}

// accountExtra returns the members of an account_update's `change` beyond
// account_id and the modelled account fields, as a JSON object in their
// order (for account_history.extra), or nil when there are none.
func accountExtra(raw json.RawMessage) (*string, error) {
	// The member encoding/json would decode as `change`: the last whose
	// name folds to it.
	var change json.RawMessage
	err := jsonobject.Each(raw, func(key string, value json.RawMessage) error {
		if strings.EqualFold(key, "change") {
			change = value
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("decode change: %w", err)
	}
	extra, err := jsonobject.Filter(change, func(key string) bool {
		return key != "account_id" && !near.IsAccountField(key)
	})
	if err != nil {
		return nil, fmt.Errorf("read account members: %w", err)
	}
	return jsonOrNull(extra), nil
}
