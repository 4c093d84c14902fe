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
	newTable(tableSpec{name: "block_changes", heightColumn: "block_height"}, func(r *rowSet) []changeDocRow { return r.changeDocs },
		col("block_height", func(w *copyWriter, r *changeDocRow) { w.int8(r.height) }),
		col("changes", func(w *copyWriter, r *changeDocRow) { w.bytes(r.changes) }),
		col("effects", func(w *copyWriter, r *changeDocRow) { w.bytes(r.effects) }),
		col("account_ids", func(w *copyWriter, r *changeDocRow) { w.texts(r.cols.accounts) }),
		col("change_types", func(w *copyWriter, r *changeDocRow) { w.texts(r.cols.types) }),
		col("cause_types", func(w *copyWriter, r *changeDocRow) { w.texts(r.cols.causes) }),
		col("cause_receipt_hashes", func(w *copyWriter, r *changeDocRow) { w.optTexts(r.cols.receipts) })),
	newTable(tableSpec{name: "account_history_ids",
		conflict: `ON CONFLICT (account, block_height) DO UPDATE SET deleted = EXCLUDED.deleted,
			amount = EXCLUDED.amount, locked = EXCLUDED.locked, code_hash = EXCLUDED.code_hash,
			storage_usage = EXCLUDED.storage_usage, storage_paid_at = EXCLUDED.storage_paid_at, extra = EXCLUDED.extra,
			global_contract_hash = EXCLUDED.global_contract_hash, global_contract_account_id = EXCLUDED.global_contract_account_id`},
		func(r *rowSet) []accountRow { return r.accounts },
		accountCol("account", func(r *accountRow) string { return r.account }),
		col("block_height", func(w *copyWriter, r *accountRow) { w.int8(r.height) }),
		col("deleted", func(w *copyWriter, r *accountRow) { w.bool(r.deleted) }),
		col("amount", func(w *copyWriter, r *accountRow) { w.numeric(r.amount) }),
		col("locked", func(w *copyWriter, r *accountRow) { w.numeric(r.locked) }),
		col("code_hash", func(w *copyWriter, r *accountRow) { unlessDeleted(w, r.deleted, r.codeHash, w.text) }),
		col("storage_usage", func(w *copyWriter, r *accountRow) { unlessDeleted(w, r.deleted, r.storageUsage, w.int8) }),
		col("storage_paid_at", func(w *copyWriter, r *accountRow) { unlessDeleted(w, r.deleted, r.storagePaidAt, w.int8) }),
		col("extra", func(w *copyWriter, r *accountRow) { w.optText(r.extra) }),
		col("global_contract_hash", func(w *copyWriter, r *accountRow) { w.optText(r.globalHash) }),
		col("global_contract_account_id", func(w *copyWriter, r *accountRow) { w.optText(r.globalAccount) })),
	newTable(tableSpec{name: "access_key_history_ids",
		conflict: `ON CONFLICT (account, public_key, block_height) DO UPDATE SET deleted = EXCLUDED.deleted,
			nonce = EXCLUDED.nonce, permission = EXCLUDED.permission, extra = EXCLUDED.extra`},
		func(r *rowSet) []accessKeyRow { return r.accessKeys },
		accountCol("account", func(r *accessKeyRow) string { return r.account }),
		col("public_key", func(w *copyWriter, r *accessKeyRow) { w.text(r.publicKey) }),
		col("block_height", func(w *copyWriter, r *accessKeyRow) { w.int8(r.height) }),
		col("deleted", func(w *copyWriter, r *accessKeyRow) { w.bool(r.deleted) }),
		col("nonce", func(w *copyWriter, r *accessKeyRow) { w.numeric(r.nonce) }),
		col("permission", func(w *copyWriter, r *accessKeyRow) { unlessDeleted(w, r.deleted, r.permission, w.text) }),
		col("extra", func(w *copyWriter, r *accessKeyRow) { w.optText(r.extra) })),
	newTable(tableSpec{name: "contract_data_history_ids",
		conflict: `ON CONFLICT (account, data_key, block_height) DO UPDATE SET deleted = EXCLUDED.deleted,
			value = EXCLUDED.value`},
		func(r *rowSet) []dataRow { return r.data },
		accountCol("account", func(r *dataRow) string { return r.account }),
		col("data_key", func(w *copyWriter, r *dataRow) { w.bytes(r.key) }),
		col("block_height", func(w *copyWriter, r *dataRow) { w.int8(r.height) }),
		col("deleted", func(w *copyWriter, r *dataRow) { w.bool(r.deleted) }),
		col("value", func(w *copyWriter, r *dataRow) { w.bytes(r.value) })),
	newTable(tableSpec{name: "contract_code_history_ids",
		conflict: `ON CONFLICT (account, block_height) DO UPDATE SET deleted = EXCLUDED.deleted,
			code_hash = EXCLUDED.code_hash`},
		func(r *rowSet) []codeHistoryRow { return r.codeHistory },
		accountCol("account", func(r *codeHistoryRow) string { return r.account }),
		col("block_height", func(w *copyWriter, r *codeHistoryRow) { w.int8(r.height) }),
		col("deleted", func(w *copyWriter, r *codeHistoryRow) { w.bool(r.deleted) }),
		col("code_hash", func(w *copyWriter, r *codeHistoryRow) { w.optText(r.codeHash) })),
	newTable(tableSpec{name: "contract_codes", conflict: "ON CONFLICT (code_hash) DO NOTHING"},
		func(r *rowSet) []codeRow { return r.codes },
		col("code_hash", func(w *copyWriter, r *codeRow) { w.text(r.hash) }),
		col("code", func(w *copyWriter, r *codeRow) { w.bytes(r.code) })),
}

// unlessDeleted writes v by put, or NULL in a deletion's row.
func unlessDeleted[T any](w *copyWriter, deleted bool, v T, put func(T)) {
	if deleted {
		w.null()
		return
	}
	put(v)
}

// The state family's rows: a deletion's holds no value (NULLs).
type (
	changeDocRow struct {
		height           int64
		changes, effects []byte // packed: the changes as served, the block's effects
		cols             changeColumns
	}
	accountRow struct {
		account                             string
		height, storageUsage, storagePaidAt int64
		deleted                             bool
		amount, locked                      numericValue
		codeHash                            string
		extra, globalHash, globalAccount    *string
	}
	accessKeyRow struct {
		account, publicKey, permission string
		height                         int64
		deleted                        bool
		nonce                          numericValue
		extra                          *string
	}
	dataRow struct {
		account    string
		key, value []byte // value nil for a deletion
		height     int64
		deleted    bool
	}
	codeHistoryRow struct {
		account  string
		height   int64
		deleted  bool
		codeHash *string
	}
	codeRow struct {
		hash string
		code []byte
	}
)

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
	r.changeDocs = append(r.changeDocs, changeDocRow{height: height, changes: r.codec.Pack(texts),
		effects: r.codec.Pack([]json.RawMessage{list}), cols: cols})
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
		row := accountRow{account: key.accountID, height: height, deleted: deleted}
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
			if extra != nil {
				if id, ok := (near.Account{Extra: json.RawMessage(*extra)}).GlobalContract(); ok && id.ByAccount() {
					row.globalAccount = &id.AccountID
				} else if ok {
					row.globalHash = &id.CodeHash
				}
			}
			row.amount, row.locked, row.codeHash = numeric(a.Amount), numeric(a.Locked), a.CodeHash
			row.storageUsage, row.storagePaidAt, row.extra = int64(a.StorageUsage), int64(a.StoragePaidAt), extra
		}
		r.accounts = append(r.accounts, row)
		r.addBalanceActivity(key.accountID, height, row.amount) // NULL for a deletion
	case "access_key":
		row := accessKeyRow{account: key.accountID, publicKey: key.sub, height: height, deleted: deleted}
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
			row.nonce, row.permission, row.extra = numeric64(ch.AccessKey.Nonce), string(perm), jsonOrNull(ch.AccessKey.Extra)
		}
		r.accessKeys = append(r.accessKeys, row)
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
		r.data = append(r.data, dataRow{account: key.accountID, key: []byte(key.sub), height: height, deleted: deleted, value: value})
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
		r.codeHistory = append(r.codeHistory, codeHistoryRow{account: key.accountID, height: height, deleted: deleted, codeHash: codeHash})
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
	r.codes = append(r.codes, codeRow{hash: hash, code: code})
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
