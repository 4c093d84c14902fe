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
// Backend returns it from Query; every method answers it as nearcore 2.x
// structures it: Err, a HANDLER_ERROR whose cause is CONTRACT_EXECUTION_ERROR
// with the vm_error, never the flat `error` string old nodes put in a result.
type ContractError struct {
	Err *near.Error
	At  near.BlockStamp
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
	return &ContractError{Err: near.ContractExecutionError(vmError, debug, at), At: at}
}

// CodeDoesNotExist is the ContractError of call_function on an account
// without a contract (nearcore's CompilationError::CodeDoesNotExist).
func CodeDoesNotExist(accountID string, at near.BlockStamp) *ContractError {
	vmError := mustJSON(map[string]map[string]map[string]string{
		"CompilationError": {"CodeDoesNotExist": {"account_id": accountID}},
	})
	debug := fmt.Sprintf("CompilationError(CodeDoesNotExist { account_id: AccountId(%q) })", accountID)
	return &ContractError{Err: near.ContractExecutionError(vmError, debug, at), At: at}
}

// legacyQueryResult is what nearcore's `query` answers, as a result, for a
// missing access key (keys in serde_json's alphabetical order).
type legacyQueryResult struct {
	BlockHash   string   `json:"block_hash"`
	BlockHeight uint64   `json:"block_height"`
	Error       string   `json:"error"`
	Logs        []string `json:"logs"`
}

// legacyQuery turns UNKNOWN_ACCESS_KEY, which nearcore's `query` reports as
// a result, into that result; ok is false for any other error. Contract
// failures are not turned: issue 6 asks for nearcore 2.x's structured
// CONTRACT_EXECUTION_ERROR there.
func legacyQuery(err error) (legacyQueryResult, bool) {
	var ne *near.Error
	if !errors.As(err, &ne) || ne.CauseName() != "UNKNOWN_ACCESS_KEY" {
		return legacyQueryResult{}, false
	}
	var info struct {
		PublicKey   string `json:"public_key"`
		BlockHeight uint64 `json:"block_height"`
		BlockHash   string `json:"block_hash"`
	}
	if json.Unmarshal(ne.Cause.Info, &info) != nil {
		return legacyQueryResult{}, false
	}
	return legacyQueryResult{BlockHash: info.BlockHash, BlockHeight: info.BlockHeight,
		Error: fmt.Sprintf("access key %s does not exist while viewing", info.PublicKey), Logs: []string{}}, true
}
