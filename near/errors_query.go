package near

import (
	"encoding/json"
	"fmt"
)

// Errors of `query` (and `EXPERIMENTAL_*` views), as nearcore names them.

// MarshalJSON encodes a BlockReference as nearcore does inside error info:
// {"block_id": 10}, {"finality": "final"} or {"sync_checkpoint": "genesis"}.
func (r BlockReference) MarshalJSON() ([]byte, error) {
	switch {
	case r.BlockID != nil:
		return json.Marshal(map[string]BlockID{"block_id": *r.BlockID})
	case r.SyncCheckpoint != "":
		return json.Marshal(map[string]string{"sync_checkpoint": r.SyncCheckpoint})
	}
	return json.Marshal(map[string]string{"finality": r.Finality})
}

// QueryUnknownBlock is query's UNKNOWN_BLOCK. For a block_id, nearcore's
// `query` replaces the legacy data string with the storage error's text
// ("DB Not Found Error: BLOCK HEIGHT: 5 \n Cause: Unknown", or
// "DB Not Found Error: BLOCK HEADER: <hash>").
func QueryUnknownBlock(ref BlockReference) *Error {
	b, _ := ref.MarshalJSON()
	data := fmt.Sprintf("Block either has never been observed on the node or has been garbage collected: %s", b)
	if id := ref.BlockID; id != nil {
		if id.IsHeight() {
			data = fmt.Sprintf("DB Not Found Error: BLOCK HEIGHT: %d \n Cause: Unknown", id.Height)
		} else {
			data = "DB Not Found Error: BLOCK HEADER: " + id.Hash
		}
	}
	return HandlerError("UNKNOWN_BLOCK", map[string]json.RawMessage{"block_reference": b}, data)
}

type stampInfo struct {
	BlockHeight uint64 `json:"block_height"`
	BlockHash   string `json:"block_hash"`
}

// infoAt is the error info {"<key>": value, "block_height", "block_hash"},
// in that order.
func infoAt(key string, value any, at BlockStamp) json.RawMessage {
	head, stamp := mustJSON(map[string]any{key: value}), mustJSON(stampInfo(at))
	return append(append(head[:len(head)-1], ','), stamp[1:]...)
}

// GarbageCollectedBlock is the error for data a regular node no longer has.
func GarbageCollectedBlock(at BlockStamp) *Error {
	return HandlerError("GARBAGE_COLLECTED_BLOCK", stampInfo(at),
		fmt.Sprintf("The data for block #%d is garbage collected on this node, use an archival node to fetch historical data", at.BlockHeight))
}

// UnknownAccount is the error for an account that does not exist at the block.
func UnknownAccount(accountID string, at BlockStamp) *Error {
	return HandlerError("UNKNOWN_ACCOUNT", infoAt("requested_account_id", accountID, at),
		fmt.Sprintf("account %s does not exist while viewing", accountID))
}

// NoContractCode is the error for view_code/call_function on an account with
// no contract.
func NoContractCode(accountID string, at BlockStamp) *Error {
	return HandlerError("NO_CONTRACT_CODE", infoAt("contract_account_id", accountID, at),
		fmt.Sprintf("Contract code for contract ID %s has never been observed on the node", accountID))
}

// TooLargeContractState is the error for view_state over the size limit.
func TooLargeContractState(accountID string, at BlockStamp) *Error {
	return HandlerError("TOO_LARGE_CONTRACT_STATE", infoAt("contract_account_id", accountID, at),
		fmt.Sprintf("State of contract %s is too large to be viewed", accountID))
}

// UnknownAccessKey is the error for view_access_key on a key the account
// does not have.
func UnknownAccessKey(publicKey string, at BlockStamp) *Error {
	return HandlerError("UNKNOWN_ACCESS_KEY", infoAt("public_key", publicKey, at),
		fmt.Sprintf("Access key for public key %s has never been observed on the node", publicKey))
}

// ContractExecutionError is call_function's error when the contract fails.
// vmError is the FunctionCallError view ({"ExecutionError": "..."}, ...) and
// debugText its Rust-Debug-like text for the legacy data string.
func ContractExecutionError(vmError json.RawMessage, debugText string, at BlockStamp) *Error {
	return HandlerError("CONTRACT_EXECUTION_ERROR", infoAt("vm_error", vmError, at),
		"Function call returned an error: "+debugText)
}

// NoSyncedBlocks is query's error before the node has any block.
func NoSyncedBlocks() *Error {
	return HandlerError("NO_SYNCED_BLOCKS", nil, "There are no fully synchronized blocks on the node yet")
}

// UnknownReceipt is EXPERIMENTAL_receipt's error for a receipt nobody has.
// As nearcore does for this method, the legacy `data` is the error object
// ({"name", "info"}), not a string.
func UnknownReceipt(receiptID string) *Error {
	info := map[string]string{"receipt_id": receiptID}
	data := struct {
		Name string            `json:"name"`
		Info map[string]string `json:"info"`
	}{"UNKNOWN_RECEIPT", info}
	return newError(KindHandler, "UNKNOWN_RECEIPT", info, CodeServerError, "Server error", data)
}

// UnknownTransaction is tx status's error for a transaction nobody has.
func UnknownTransaction(txHash string) *Error {
	return HandlerError("UNKNOWN_TRANSACTION", map[string]string{"requested_transaction_hash": txHash},
		fmt.Sprintf("Transaction %s doesn't exist", txHash))
}
