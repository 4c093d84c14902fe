package rpcserve

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
)

// ContractError is a call_function failure of the contract itself. A
// Backend returns it from Query; the handler answers `query` with nearcore's
// legacy success-shaped result {block_hash, block_height, error, logs}
// carrying Legacy, and answers Err (CONTRACT_EXECUTION_ERROR) everywhere a
// structured error is expected.
type ContractError struct {
	Err    *near.Error
	Legacy string // "wasm execution failed with error: ..."
	At     near.BlockStamp
}

func (e *ContractError) Error() string { return e.Err.Error() }

// Unwrap exposes the structured error.
func (e *ContractError) Unwrap() error { return e.Err }

// NewContractError is the ContractError of a nearvm failure at a block.
func NewContractError(fce *nearvm.FunctionCallError, at near.BlockStamp) *ContractError {
	vmError, err := json.Marshal(fce)
	if err != nil {
		vmError = mustJSON(map[string]string{"ExecutionError": fce.Error()})
	}
	debug := strings.TrimPrefix(fce.RPCData(), "Function call returned an error: ")
	return &ContractError{Err: near.ContractExecutionError(vmError, debug, at), Legacy: fce.LegacyString(), At: at}
}

// CodeDoesNotExist is the ContractError of call_function on an account
// without a contract (nearcore's CompilationError::CodeDoesNotExist).
func CodeDoesNotExist(accountID string, at near.BlockStamp) *ContractError {
	vmError := mustJSON(map[string]map[string]map[string]string{
		"CompilationError": {"CodeDoesNotExist": {"account_id": accountID}},
	})
	debug := fmt.Sprintf("CompilationError(CodeDoesNotExist { account_id: AccountId(%q) })", accountID)
	return &ContractError{
		Err:    near.ContractExecutionError(vmError, debug, at),
		Legacy: "wasm execution failed with error: " + debug,
		At:     at,
	}
}

// legacyQueryResult is what nearcore's `query` answers, as a result, for a
// failed call_function or a missing access key (keys in serde_json's
// alphabetical order).
type legacyQueryResult struct {
	BlockHash   string   `json:"block_hash"`
	BlockHeight uint64   `json:"block_height"`
	Error       string   `json:"error"`
	Logs        []string `json:"logs"`
}

// legacyQuery turns the errors nearcore's `query` reports as results into
// those results; ok is false for any other error.
func legacyQuery(err error) (legacyQueryResult, bool) {
	var ce *ContractError
	if errors.As(err, &ce) {
		return legacyQueryResult{BlockHash: ce.At.BlockHash, BlockHeight: ce.At.BlockHeight, Error: ce.Legacy, Logs: []string{}}, true
	}
	var ne *near.Error
	if !errors.As(err, &ne) || ne.Cause == nil {
		return legacyQueryResult{}, false
	}
	var info struct {
		PublicKey   string `json:"public_key"`
		BlockHeight uint64 `json:"block_height"`
		BlockHash   string `json:"block_hash"`
	}
	switch ne.Cause.Name {
	case "UNKNOWN_ACCESS_KEY":
		if json.Unmarshal(ne.Cause.Info, &info) != nil {
			return legacyQueryResult{}, false
		}
		return legacyQueryResult{BlockHash: info.BlockHash, BlockHeight: info.BlockHeight,
			Error: fmt.Sprintf("access key %s does not exist while viewing", info.PublicKey), Logs: []string{}}, true
	case "CONTRACT_EXECUTION_ERROR":
		// A Backend that did not use ContractError: word it from the data.
		var data string
		if json.Unmarshal(ne.Cause.Info, &info) != nil || json.Unmarshal(ne.Data, &data) != nil {
			return legacyQueryResult{}, false
		}
		return legacyQueryResult{BlockHash: info.BlockHash, BlockHeight: info.BlockHeight,
			Error: "wasm execution failed with error: " + strings.TrimPrefix(data, "Function call returned an error: "), Logs: []string{}}, true
	}
	return legacyQueryResult{}, false
}
