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
func ParseChunkRequest(params json.RawMessage) (ChunkRequest, error) {
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
		if perr := hashArg("chunk hash", *raw.ChunkID); perr != nil {
			return ChunkRequest{}, perr
		}
		return ChunkRequest{ChunkID: *raw.ChunkID}, nil
	case raw.ChunkID == nil && raw.BlockID != nil && raw.ShardID != nil:
		id, perr := parseBlockID(raw.BlockID)
		if perr != nil {
			return ChunkRequest{}, perr
		}
		return ChunkRequest{BlockID: id, ShardID: *raw.ShardID}, nil
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
func ParseQueryRequest(params json.RawMessage) (QueryRequest, error) {
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
	var q QueryRequest
	var perr error
	if q.RequestType, perr = required("request_type", raw.RequestType); perr != nil {
		return q, perr
	}
	if q.RequestType == QueryViewGlobalContractCode {
		if q.CodeHash, perr = required("code_hash", raw.CodeHash); perr != nil {
			return q, perr
		}
		if perr = hashArg("code hash", q.CodeHash); perr != nil {
			return q, perr
		}
	} else {
		if q.AccountID, perr = required("account_id", raw.AccountID); perr != nil {
			return q, perr
		}
		if perr = accountArg(q.AccountID); perr != nil {
			return q, perr
		}
	}
	switch q.RequestType {
	case QueryViewAccount, QueryViewCode, QueryViewAccessKeyList,
		QueryViewGasKeyList, QueryViewGlobalContractCode, QueryViewGlobalContractCodeByAccountID:
	case QueryViewAccessKey, QueryViewGasKey:
		if q.PublicKey, perr = required("public_key", raw.PublicKey); perr != nil {
			return q, perr
		}
		if !ValidPublicKey(q.PublicKey) {
			return q, invalidArg("public key", q.PublicKey)
		}
	case QueryViewState:
		if q.Prefix, perr = base64Arg("prefix_base64", raw.PrefixBase64); perr != nil {
			return q, perr
		}
		q.IncludeProof = raw.IncludeProof != nil && *raw.IncludeProof
	case QueryCallFunction:
		if q.MethodName, perr = required("method_name", raw.MethodName); perr != nil {
			return q, perr
		}
		if q.Args, perr = base64Arg("args_base64", raw.ArgsBase64); perr != nil {
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

// required returns the value of the params member name, or the PARSE_ERROR
// of params that lack it.
func required[T any](name string, v *T) (T, error) {
	if v == nil {
		var zero T
		return zero, ParseError(fmt.Sprintf("Failed parsing args: missing field `%s`", name))
	}
	return *v, nil
}

// base64Arg decodes the required base64 member name.
func base64Arg(name string, v *string) ([]byte, error) {
	s, perr := required(name, v)
	if perr != nil {
		return nil, perr
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, ParseError(fmt.Sprintf("Failed parsing args: `%s` is not valid base64", name))
	}
	return b, nil
}

// invalidArg is the PARSE_ERROR of a member whose value is not a valid what
// ("account id", "chunk hash").
func invalidArg(what, value string) error {
	return ParseError(fmt.Sprintf("Failed parsing args: invalid %s %q", what, Clip(value)))
}

// hashArg checks that value is a crypto hash; what names it in the error.
func hashArg(what, value string) error {
	if _, err := ParseCryptoHash(value); err != nil {
		return invalidArg(what, value)
	}
	return nil
}

// accountArg checks that value is a valid account id.
func accountArg(value string) error {
	if !ValidAccountID(value) {
		return invalidArg("account id", value)
	}
	return nil
}

// parseBlockID reads a block_id member: a height or a block hash.
func parseBlockID(raw []byte) (*BlockID, error) {
	var id BlockID
	if err := id.UnmarshalJSON(raw); err != nil {
		return nil, ParseError("Failed parsing args: " + err.Error())
	}
	return &id, nil
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
func ParseChangesRequest(params json.RawMessage) (ChangesRequest, error) {
	var raw struct {
		ChangesType     *string             `json:"changes_type"`
		AccountIDs      *[]string           `json:"account_ids"`
		Keys            *[]AccountPublicKey `json:"keys"`
		KeyPrefixBase64 *string             `json:"key_prefix_base64"`
	}
	if err := decodeParams(params, &raw); err != nil {
		return ChangesRequest{}, err
	}
	var c ChangesRequest
	var perr error
	if c.ChangesType, perr = required("changes_type", raw.ChangesType); perr != nil {
		return c, perr
	}
	switch c.ChangesType {
	case ChangesAccount, ChangesAllAccessKey, ChangesContractCode, ChangesData:
		if c.AccountIDs, perr = required("account_ids", raw.AccountIDs); perr != nil {
			return c, perr
		}
		for _, id := range c.AccountIDs {
			if perr = accountArg(id); perr != nil {
				return c, perr
			}
		}
		if c.ChangesType == ChangesData {
			if c.KeyPrefix, perr = base64Arg("key_prefix_base64", raw.KeyPrefixBase64); perr != nil {
				return c, perr
			}
		}
	case ChangesSingleAccessKey:
		if c.Keys, perr = required("keys", raw.Keys); perr != nil {
			return c, perr
		}
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
func ParseGasPriceRequest(params json.RawMessage) (*BlockID, error) {
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
	return parseBlockID(raw)
}

// TxRequest is a parsed `tx` / `EXPERIMENTAL_tx_status` request.
type TxRequest struct {
	TxHash          string
	SenderAccountID string
	WaitUntil       string
}

// ParseTxRequest reads `tx` params: {"tx_hash", "sender_account_id",
// "wait_until"?}, {"signed_tx_base64", "wait_until"?}, or the legacy
// arrays [tx_hash, sender_account_id] and [signed_tx_base64]. A signed
// transaction is read for its hash and signer (signedTxID).
func ParseTxRequest(params json.RawMessage) (TxRequest, error) {
	trimmed := bytes.TrimSpace(params)
	var r TxRequest
	var signed *string
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var arr []string
		if err := json.Unmarshal(trimmed, &arr); err != nil || len(arr) < 1 || len(arr) > 2 {
			return r, ParseError("Failed parsing args: expected [signed_tx_base64] or [tx_hash, sender_account_id]")
		}
		if len(arr) == 1 {
			signed = &arr[0]
		} else {
			r.TxHash, r.SenderAccountID = arr[0], arr[1]
		}
	} else {
		var raw struct {
			SignedTxBase64  *string `json:"signed_tx_base64"`
			TxHash          *string `json:"tx_hash"`
			SenderAccountID *string `json:"sender_account_id"`
			WaitUntil       *string `json:"wait_until"`
		}
		if err := decodeParams(params, &raw); err != nil {
			return r, err
		}
		switch {
		case raw.SignedTxBase64 != nil:
			signed = raw.SignedTxBase64
		case raw.TxHash != nil && raw.SenderAccountID != nil:
			r.TxHash, r.SenderAccountID = *raw.TxHash, *raw.SenderAccountID
		default:
			return r, ParseError("Failed parsing args: expected `signed_tx_base64`, or `tx_hash` and `sender_account_id`")
		}
		if raw.WaitUntil != nil {
			r.WaitUntil = *raw.WaitUntil
		}
	}
	if signed != nil {
		var perr error
		if r.TxHash, r.SenderAccountID, perr = signedTxID(*signed); perr != nil {
			return r, perr
		}
	}
	if perr := hashArg("transaction hash", r.TxHash); perr != nil {
		return r, perr
	}
	if perr := accountArg(r.SenderAccountID); perr != nil {
		return r, perr
	}
	switch r.WaitUntil {
	case "", "NONE", "INCLUDED", "EXECUTED_OPTIMISTIC", "INCLUDED_FINAL", "EXECUTED", "FINAL":
	default:
		return r, ParseError(fmt.Sprintf("Failed parsing args: unknown wait_until %q", Clip(r.WaitUntil)))
	}
	return r, nil
}

// ParseReceiptRequest reads EXPERIMENTAL_receipt params: {"receipt_id"}.
func ParseReceiptRequest(params json.RawMessage) (string, error) {
	var raw struct {
		ReceiptID *string `json:"receipt_id"`
	}
	if err := decodeParams(params, &raw); err != nil {
		return "", err
	}
	id, perr := required("receipt_id", raw.ReceiptID)
	if perr != nil {
		return "", perr
	}
	if perr := hashArg("receipt id", id); perr != nil {
		return "", perr
	}
	return id, nil
}
