package near

import (
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/internal/fastjson"
	"github.com/nearline/nearline/internal/jsonobject"
)

// StateChangeCauseView says why state changed: {"type": "transaction_processing",
// "tx_hash": ...}, {"type": "receipt_processing", "receipt_hash": ...}, ...
type StateChangeCauseView struct {
	Type        string `json:"type"`
	TxHash      string `json:"tx_hash,omitempty"`
	ReceiptHash string `json:"receipt_hash,omitempty"`
}

// State change types, as `changes` and `EXPERIMENTAL_changes` name them.
const (
	ChangeAccountUpdate        = "account_update"
	ChangeAccountDeletion      = "account_deletion"
	ChangeAccessKeyUpdate      = "access_key_update"
	ChangeAccessKeyDeletion    = "access_key_deletion"
	ChangeDataUpdate           = "data_update"
	ChangeDataDeletion         = "data_deletion"
	ChangeContractCodeUpdate   = "contract_code_update"
	ChangeContractCodeDeletion = "contract_code_deletion"
)

// StateChangeWithCauseView is one entry of a `changes` result.
type StateChangeWithCauseView struct {
	Cause  StateChangeCauseView `json:"cause"`
	Type   string               `json:"type"`
	Change StateChangeValue     `json:"change"`
	// Raw, when set, is the change exactly as the upstream served it, and
	// is what the change encodes to: fields and variants the typed fields
	// do not model (newer nearcore's) are kept, never dropped. The typed
	// fields are for reading; Raw is what is served.
	Raw json.RawMessage `json:"-"`
}

// MarshalJSON encodes Raw when it is set, else the typed fields.
func (v StateChangeWithCauseView) MarshalJSON() ([]byte, error) {
	if len(v.Raw) > 0 {
		return v.Raw, nil
	}
	type typed StateChangeWithCauseView
	return json.Marshal(typed(v))
}

// StateChangeValue is the `change` object of a state change. Which fields
// are set depends on the change type; the field order keeps each type's
// fields in nearcore's order.
type StateChangeValue struct {
	AccountID   string         `json:"account_id"`
	PublicKey   *string        `json:"public_key,omitempty"`
	AccessKey   *AccessKeyView `json:"access_key,omitempty"`
	KeyBase64   *[]byte        `json:"key_base64,omitempty"`
	ValueBase64 *[]byte        `json:"value_base64,omitempty"`
	CodeBase64  *[]byte        `json:"code_base64,omitempty"`
	*Account
}

// MarshalJSON encodes the change's fields and, for an account, the members
// of Account.Extra after the modelled ones, where nearcore's flattened
// AccountView puts them.
func (v StateChangeValue) MarshalJSON() ([]byte, error) {
	type typed StateChangeValue
	out, err := json.Marshal(typed(v))
	if err != nil || v.Account == nil {
		return out, err
	}
	return jsonobject.Join(out, v.Account.Extra), nil
}

// Account is an account's state: the `change` of an account_update and the
// body of a view_account result.
type Account struct {
	Amount        U128   `json:"amount"`
	Locked        U128   `json:"locked"`
	CodeHash      string `json:"code_hash"`
	StorageUsage  uint64 `json:"storage_usage"`
	StoragePaidAt uint64 `json:"storage_paid_at"`
	// Extra holds the members the upstream's account carried beyond these
	// (a newer nearcore's global_contract_hash, say) as a JSON object, in
	// their order; AccountView encodes them after the modelled fields.
	Extra json.RawMessage `json:"-"`
}

// IsAccountField reports whether key is one of the account members Nearline
// models (amount, locked, code_hash, storage_usage, storage_paid_at).
func IsAccountField(key string) bool {
	switch key {
	case "amount", "locked", "code_hash", "storage_usage", "storage_paid_at":
		return true
	}
	return false
}

// StateChangeKindView is one entry of a `block_effects` /
// `EXPERIMENTAL_changes_in_block` result.
type StateChangeKindView struct {
	Type      string `json:"type"`
	AccountID string `json:"account_id"`
}

// Block effect types.
const (
	EffectAccountTouched      = "account_touched"
	EffectAccessKeyTouched    = "access_key_touched"
	EffectDataTouched         = "data_touched"
	EffectContractCodeTouched = "contract_code_touched"
)

// BlockEffectsView is the result of `block_effects` and
// `EXPERIMENTAL_changes_in_block`.
type BlockEffectsView struct {
	BlockHash string                `json:"block_hash"`
	Changes   []StateChangeKindView `json:"changes"`
}

// ChangesView is the result of `changes` and `EXPERIMENTAL_changes`.
type ChangesView struct {
	BlockHash string                     `json:"block_hash"`
	Changes   []StateChangeWithCauseView `json:"changes"`
}

// AccessKeyView is an access key: nonce and permission.
type AccessKeyView struct {
	Nonce      uint64              `json:"nonce"`
	Permission AccessKeyPermission `json:"permission"`
	// Extra holds the members the upstream's key carried beyond these (a
	// newer nearcore's gas key info, say) as a JSON object, in their order;
	// decoding fills it and encoding writes it after permission.
	Extra json.RawMessage `json:"-"`
}

// AccessKeyPermission is "FullAccess" or {"FunctionCall": {...}}, or a
// variant Nearline does not model (nearcore's gas-key permissions, say),
// kept as it came in Other and encoded back the same.
type AccessKeyPermission struct {
	FunctionCall *FunctionCallPermission
	// Other is a permission of another variant, exactly as served.
	Other json.RawMessage
}

// Known reports whether the permission is one Nearline models.
func (p AccessKeyPermission) Known() bool { return len(p.Other) == 0 }

// FunctionCallPermission limits a key to calls on one receiver.
type FunctionCallPermission struct {
	Allowance   *U128    `json:"allowance"`
	ReceiverID  string   `json:"receiver_id"`
	MethodNames []string `json:"method_names"`
}

// MarshalJSON encodes "FullAccess" or {"FunctionCall": {...}}.
func (p AccessKeyPermission) MarshalJSON() ([]byte, error) {
	if len(p.Other) > 0 {
		return p.Other, nil
	}
	if p.FunctionCall == nil {
		return []byte(`"FullAccess"`), nil
	}
	fc := *p.FunctionCall
	if fc.MethodNames == nil {
		fc.MethodNames = []string{}
	}
	return json.Marshal(map[string]FunctionCallPermission{"FunctionCall": fc})
}

// UnmarshalJSON decodes "FullAccess" or {"FunctionCall": {...}}; any other
// string or single-key object is kept in Other, so a newer nearcore's
// permission never stops the indexer.
func (p *AccessKeyPermission) UnmarshalJSON(data []byte) error {
	*p = AccessKeyPermission{}
	var name string
	if !isObject(data) && json.Unmarshal(data, &name) == nil {
		if name != "FullAccess" {
			p.Other = append(json.RawMessage(nil), data...)
		}
		return nil
	}
	var tagged map[string]json.RawMessage
	if err := fastjson.Unmarshal(data, &tagged); err != nil {
		return fmt.Errorf("decode access key permission: %w", err)
	}
	fc, ok := tagged["FunctionCall"]
	if !ok || len(tagged) != 1 {
		if len(tagged) == 0 {
			return fmt.Errorf("decode access key permission: empty object")
		}
		p.Other = append(json.RawMessage(nil), data...)
		return nil
	}
	p.FunctionCall = new(FunctionCallPermission)
	if err := fastjson.Unmarshal(fc, p.FunctionCall); err != nil {
		return fmt.Errorf("decode access key permission: %w", err)
	}
	return nil
}

// BlockStamp closes every `query` result: the block it was answered at.
type BlockStamp struct {
	BlockHeight uint64 `json:"block_height"`
	BlockHash   string `json:"block_hash"`
}

// AccountView is the result of `query` view_account.
type AccountView struct {
	Account
	BlockStamp
}

// MarshalJSON encodes the account's fields, its Extra members, then the
// block stamp: nearcore's order, with what Nearline does not model kept.
func (v AccountView) MarshalJSON() ([]byte, error) {
	return encodeJoined(v.Account, v.Extra, v.BlockStamp)
}

// AccessKeyResult is the result of `query` view_access_key.
type AccessKeyResult struct {
	AccessKeyView
	BlockStamp
}

// AccessKeyInfoView is one key of a view_access_key_list result.
type AccessKeyInfoView struct {
	PublicKey string        `json:"public_key"`
	AccessKey AccessKeyView `json:"access_key"`
}

// AccessKeyListView is the result of `query` view_access_key_list.
type AccessKeyListView struct {
	Keys []AccessKeyInfoView `json:"keys"`
	BlockStamp
}

// StateItem is one key/value pair of a view_state result (base64 both).
type StateItem struct {
	Key   []byte `json:"key"`
	Value []byte `json:"value"`
}

// ViewStateResult is the result of `query` view_state.
type ViewStateResult struct {
	Values []StateItem `json:"values"`
	BlockStamp
}

// ContractCodeView is the result of `query` view_code.
type ContractCodeView struct {
	CodeBase64 []byte `json:"code_base64"`
	Hash       string `json:"hash"`
	BlockStamp
}

// CallResult is the result of `query` call_function: the return value as an
// array of byte values, and the logs.
type CallResult struct {
	Result ByteArray `json:"result"`
	Logs   []string  `json:"logs"`
	BlockStamp
}

// ByteArray encodes as a JSON array of numbers, as nearcore's call results do.
type ByteArray []byte

// MarshalJSON encodes b as [n, n, ...].
func (b ByteArray) MarshalJSON() ([]byte, error) {
	ints := make([]int, len(b))
	for i, v := range b {
		ints[i] = int(v)
	}
	return json.Marshal(ints)
}

// UnmarshalJSON decodes [n, n, ...].
func (b *ByteArray) UnmarshalJSON(data []byte) error {
	var ints []uint8
	var raw []json.Number
	if err := fastjson.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("decode byte array: %w", err)
	}
	ints = make([]uint8, len(raw))
	for i, n := range raw {
		v, err := n.Int64()
		if err != nil || v < 0 || v > 255 {
			return fmt.Errorf("decode byte array: %q is not a byte", n)
		}
		ints[i] = uint8(v)
	}
	*b = ints
	return nil
}
