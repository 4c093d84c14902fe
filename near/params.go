package near

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/internal/jsonobject"
)

// ChunkRequest selects a chunk: by ChunkID, or by BlockID and ShardID.
type ChunkRequest struct {
	ChunkID string
	BlockID *BlockID
	ShardID uint64
}

// ParseChunkRequest reads `chunk` params: {"chunk_id"} or {"block_id", "shard_id"}.
func ParseChunkRequest(params json.RawMessage) (ChunkRequest, *Error) {
	var raw struct {
		ChunkID *string     `json:"chunk_id"`
		BlockID blockIDText `json:"block_id"`
		ShardID *uint64     `json:"shard_id"`
	}
	if err := decodeParams(params, &raw); err != nil {
		return ChunkRequest{}, err
	}
	switch {
	case raw.ChunkID != nil && raw.BlockID == nil && raw.ShardID == nil:
		if _, err := ParseCryptoHash(*raw.ChunkID); err != nil {
			return ChunkRequest{}, ParseError(fmt.Sprintf("Failed parsing args: invalid chunk hash %q", Clip(*raw.ChunkID)))
		}
		return ChunkRequest{ChunkID: *raw.ChunkID}, nil
	case raw.ChunkID == nil && raw.BlockID != nil && raw.ShardID != nil:
		var id BlockID
		if err := id.UnmarshalJSON(raw.BlockID); err != nil {
			return ChunkRequest{}, ParseError("Failed parsing args: " + err.Error())
		}
		return ChunkRequest{BlockID: &id, ShardID: *raw.ShardID}, nil
	}
	return ChunkRequest{}, ParseError("Failed parsing args: expected `chunk_id`, or `block_id` and `shard_id`")
}

// Query request types.
const (
	QueryViewAccount       = "view_account"
	QueryViewCode          = "view_code"
	QueryViewState         = "view_state"
	QueryViewAccessKey     = "view_access_key"
	QueryViewAccessKeyList = "view_access_key_list"
	QueryCallFunction      = "call_function"
	// Gas keys (nearcore 2.9+) and global contract code (protocol 77+):
	// parsed, so they are forwarded or clearly refused, never "unknown
	// variant".
	QueryViewGasKey                        = "view_gas_key"
	QueryViewGasKeyList                    = "view_gas_key_list"
	QueryViewGlobalContractCode            = "view_global_contract_code"
	QueryViewGlobalContractCodeByAccountID = "view_global_contract_code_by_account_id"
)

// QueryRequest is a parsed `query` request.
type QueryRequest struct {
	Block        BlockReference
	RequestType  string
	AccountID    string
	PublicKey    string // view_access_key, view_gas_key
	CodeHash     string // view_global_contract_code
	Prefix       []byte // view_state
	IncludeProof bool   // view_state
	MethodName   string // call_function
	Args         []byte // call_function
}

// ParseQueryRequest reads `query` params (object form).
func ParseQueryRequest(params json.RawMessage) (QueryRequest, *Error) {
	var raw struct {
		RequestType  *string `json:"request_type"`
		AccountID    *string `json:"account_id"`
		PublicKey    *string `json:"public_key"`
		PrefixBase64 *string `json:"prefix_base64"`
		IncludeProof *bool   `json:"include_proof"`
		MethodName   *string `json:"method_name"`
		ArgsBase64   *string `json:"args_base64"`
		CodeHash     *string `json:"code_hash"`
	}
	if err := decodeParams(params, &raw); err != nil {
		return QueryRequest{}, err
	}
	if raw.RequestType == nil {
		return QueryRequest{}, ParseError("Failed parsing args: missing field `request_type`")
	}
	q := QueryRequest{RequestType: *raw.RequestType}
	need := func(name string, v *string) (string, *Error) {
		if v == nil {
			return "", ParseError(fmt.Sprintf("Failed parsing args: missing field `%s`", name))
		}
		return *v, nil
	}
	var perr *Error
	if q.RequestType == QueryViewGlobalContractCode {
		if q.CodeHash, perr = need("code_hash", raw.CodeHash); perr != nil {
			return q, perr
		}
		if _, err := ParseCryptoHash(q.CodeHash); err != nil {
			return q, ParseError(fmt.Sprintf("Failed parsing args: invalid code hash %q", Clip(q.CodeHash)))
		}
	} else {
		if q.AccountID, perr = need("account_id", raw.AccountID); perr != nil {
			return q, perr
		}
		if !ValidAccountID(q.AccountID) {
			return q, ParseError(fmt.Sprintf("Failed parsing args: invalid account id %q", Clip(q.AccountID)))
		}
	}
	switch q.RequestType {
	case QueryViewAccount, QueryViewCode, QueryViewAccessKeyList,
		QueryViewGasKeyList, QueryViewGlobalContractCode, QueryViewGlobalContractCodeByAccountID:
	case QueryViewAccessKey, QueryViewGasKey:
		if q.PublicKey, perr = need("public_key", raw.PublicKey); perr != nil {
			return q, perr
		}
		if !ValidPublicKey(q.PublicKey) {
			return q, ParseError(fmt.Sprintf("Failed parsing args: invalid public key %q", Clip(q.PublicKey)))
		}
	case QueryViewState:
		prefix, perr := need("prefix_base64", raw.PrefixBase64)
		if perr != nil {
			return q, perr
		}
		if q.Prefix, perr = decodeBase64("prefix_base64", prefix); perr != nil {
			return q, perr
		}
		q.IncludeProof = raw.IncludeProof != nil && *raw.IncludeProof
	case QueryCallFunction:
		if q.MethodName, perr = need("method_name", raw.MethodName); perr != nil {
			return q, perr
		}
		args, perr := need("args_base64", raw.ArgsBase64)
		if perr != nil {
			return q, perr
		}
		if q.Args, perr = decodeBase64("args_base64", args); perr != nil {
			return q, perr
		}
	default:
		return q, ParseError(fmt.Sprintf("Failed parsing args: unknown variant `%s`, expected one of `view_account`, `view_code`, `view_state`, `view_access_key`, `view_access_key_list`, `view_gas_key`, `view_gas_key_list`, `call_function`, `view_global_contract_code`, `view_global_contract_code_by_account_id`", Clip(q.RequestType)))
	}
	ref, perr := ParseBlockReference(params)
	if perr != nil {
		return q, perr
	}
	q.Block = ref
	return q, nil
}

func decodeBase64(field, s string) ([]byte, *Error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, ParseError(fmt.Sprintf("Failed parsing args: `%s` is not valid base64", field))
	}
	return b, nil
}

// Changes types.
const (
	ChangesAccount         = "account_changes"
	ChangesSingleAccessKey = "single_access_key_changes"
	ChangesAllAccessKey    = "all_access_key_changes"
	ChangesData            = "data_changes"
	ChangesContractCode    = "contract_code_changes"
)

// AccountPublicKey names one access key.
type AccountPublicKey struct {
	AccountID string `json:"account_id"`
	PublicKey string `json:"public_key"`
}

// ChangesRequest is a parsed `changes` / `EXPERIMENTAL_changes` request.
type ChangesRequest struct {
	Block       BlockReference
	ChangesType string
	AccountIDs  []string           // all but single_access_key_changes
	Keys        []AccountPublicKey // single_access_key_changes
	KeyPrefix   []byte             // data_changes
}

// ParseChangesRequest reads `changes` params.
func ParseChangesRequest(params json.RawMessage) (ChangesRequest, *Error) {
	var raw struct {
		ChangesType     *string             `json:"changes_type"`
		AccountIDs      *[]string           `json:"account_ids"`
		Keys            *[]AccountPublicKey `json:"keys"`
		KeyPrefixBase64 *string             `json:"key_prefix_base64"`
	}
	if err := decodeParams(params, &raw); err != nil {
		return ChangesRequest{}, err
	}
	if raw.ChangesType == nil {
		return ChangesRequest{}, ParseError("Failed parsing args: missing field `changes_type`")
	}
	c := ChangesRequest{ChangesType: *raw.ChangesType}
	switch c.ChangesType {
	case ChangesAccount, ChangesAllAccessKey, ChangesContractCode, ChangesData:
		if raw.AccountIDs == nil {
			return c, ParseError("Failed parsing args: missing field `account_ids`")
		}
		c.AccountIDs = *raw.AccountIDs
		for _, id := range c.AccountIDs {
			if !ValidAccountID(id) {
				return c, ParseError(fmt.Sprintf("Failed parsing args: invalid account id %q", Clip(id)))
			}
		}
		if c.ChangesType == ChangesData {
			if raw.KeyPrefixBase64 == nil {
				return c, ParseError("Failed parsing args: missing field `key_prefix_base64`")
			}
			var perr *Error
			if c.KeyPrefix, perr = decodeBase64("key_prefix_base64", *raw.KeyPrefixBase64); perr != nil {
				return c, perr
			}
		}
	case ChangesSingleAccessKey:
		if raw.Keys == nil {
			return c, ParseError("Failed parsing args: missing field `keys`")
		}
		c.Keys = *raw.Keys
		for _, k := range c.Keys {
			if !ValidAccountID(k.AccountID) || !ValidPublicKey(k.PublicKey) {
				return c, ParseError(fmt.Sprintf("Failed parsing args: invalid key %s/%s", Clip(k.AccountID), Clip(k.PublicKey)))
			}
		}
	default:
		return c, ParseError(fmt.Sprintf("Failed parsing args: unknown variant `%s`, expected one of `account_changes`, `single_access_key_changes`, `all_access_key_changes`, `contract_code_changes`, `data_changes`", Clip(c.ChangesType)))
	}
	ref, perr := ParseBlockReference(params)
	if perr != nil {
		return c, perr
	}
	c.Block = ref
	return c, nil
}

// ParseGasPriceRequest reads `gas_price` params: [height], [hash], [null],
// {"block_id": ...} or {}. A nil result means the latest block.
func ParseGasPriceRequest(params json.RawMessage) (*BlockID, *Error) {
	trimmed := bytes.TrimSpace(params)
	var raw []byte
	switch {
	case len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")):
		return nil, nil
	case trimmed[0] == '[':
		arr, err := jsonobject.Items(trimmed)
		if err != nil || len(arr) != 1 {
			return nil, ParseError("Failed parsing args: expected an array of one block id or null")
		}
		raw = arr[0]
	case trimmed[0] == '{':
		var obj struct {
			BlockID blockIDText `json:"block_id"`
		}
		if perr := decodeParams(trimmed, &obj); perr != nil {
			return nil, perr
		}
		raw = obj.BlockID
	default:
		return nil, ParseError("Failed parsing args: params must be an array or an object")
	}
	if raw == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var id BlockID
	if err := id.UnmarshalJSON(raw); err != nil {
		return nil, ParseError("Failed parsing args: " + err.Error())
	}
	return &id, nil
}

// TxRequest is a parsed `tx` / `EXPERIMENTAL_tx_status` request.
type TxRequest struct {
	TxHash          string
	SenderAccountID string
	WaitUntil       string
}

// ParseTxRequest reads `tx` params: {"tx_hash", "sender_account_id",
// "wait_until"?} or the legacy array [tx_hash, sender_account_id].
func ParseTxRequest(params json.RawMessage) (TxRequest, *Error) {
	trimmed := bytes.TrimSpace(params)
	var r TxRequest
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var arr []string
		if err := json.Unmarshal(trimmed, &arr); err != nil || len(arr) != 2 {
			return r, ParseError("Failed parsing args: expected [tx_hash, sender_account_id]")
		}
		r.TxHash, r.SenderAccountID = arr[0], arr[1]
	} else {
		var raw struct {
			TxHash          *string `json:"tx_hash"`
			SenderAccountID *string `json:"sender_account_id"`
			WaitUntil       *string `json:"wait_until"`
		}
		if err := decodeParams(params, &raw); err != nil {
			return r, err
		}
		if raw.TxHash == nil || raw.SenderAccountID == nil {
			return r, ParseError("Failed parsing args: expected `tx_hash` and `sender_account_id`")
		}
		r.TxHash, r.SenderAccountID = *raw.TxHash, *raw.SenderAccountID
		if raw.WaitUntil != nil {
			r.WaitUntil = *raw.WaitUntil
		}
	}
	if _, err := ParseCryptoHash(r.TxHash); err != nil {
		return r, ParseError(fmt.Sprintf("Failed parsing args: invalid transaction hash %q", Clip(r.TxHash)))
	}
	if !ValidAccountID(r.SenderAccountID) {
		return r, ParseError(fmt.Sprintf("Failed parsing args: invalid account id %q", Clip(r.SenderAccountID)))
	}
	switch r.WaitUntil {
	case "", "NONE", "INCLUDED", "EXECUTED_OPTIMISTIC", "INCLUDED_FINAL", "EXECUTED", "FINAL":
	default:
		return r, ParseError(fmt.Sprintf("Failed parsing args: unknown wait_until %q", Clip(r.WaitUntil)))
	}
	return r, nil
}

// ParseReceiptRequest reads EXPERIMENTAL_receipt params: {"receipt_id"}.
func ParseReceiptRequest(params json.RawMessage) (string, *Error) {
	var raw struct {
		ReceiptID *string `json:"receipt_id"`
	}
	if err := decodeParams(params, &raw); err != nil {
		return "", err
	}
	if raw.ReceiptID == nil {
		return "", ParseError("Failed parsing args: missing field `receipt_id`")
	}
	if _, err := ParseCryptoHash(*raw.ReceiptID); err != nil {
		return "", ParseError(fmt.Sprintf("Failed parsing args: invalid receipt id %q", Clip(*raw.ReceiptID)))
	}
	return *raw.ReceiptID, nil
}
