package near

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ContractFailure is a contract runtime's failure of one call, as
// NewContractError needs it (nearvm's *FunctionCallError is one): its JSON
// is nearcore's public FunctionCallError view, the vm_error; RPCData is the
// legacy data text, "Function call returned an error: <debug form>".
type ContractFailure interface {
	error
	json.Marshaler
	RPCData() string
}

// ContractError is a call_function failure of the contract itself. A
// backend returns it from Query; every method answers it as nearcore 2.x
// structures it: Err, a HANDLER_ERROR whose cause is CONTRACT_EXECUTION_ERROR
// with the vm_error, never the flat `error` string old nodes put in a result.
type ContractError struct {
	Err *Error
	At  BlockStamp
}

func (e *ContractError) Error() string { return e.Err.Error() }

// Unwrap exposes the structured error.
func (e *ContractError) Unwrap() error { return e.Err }

// NewContractError is the ContractError of a contract runtime's failure at a
// block.
func NewContractError(failure ContractFailure, at BlockStamp) *ContractError {
	vmError, err := json.Marshal(failure)
	if err != nil {
		vmError = mustJSON(map[string]string{"ExecutionError": failure.Error()})
	}
	debug := strings.TrimPrefix(failure.RPCData(), "Function call returned an error: ")
	return &ContractError{Err: ContractExecutionError(vmError, debug, at), At: at}
}

// CodeDoesNotExist is the ContractError of call_function on an account
// without a contract (nearcore's CompilationError::CodeDoesNotExist).
func CodeDoesNotExist(accountID string, at BlockStamp) *ContractError {
	vmError := mustJSON(map[string]map[string]map[string]string{
		"CompilationError": {"CodeDoesNotExist": {"account_id": accountID}},
	})
	debug := fmt.Sprintf("CompilationError(CodeDoesNotExist { account_id: AccountId(%q) })", accountID)
	return &ContractError{Err: ContractExecutionError(vmError, debug, at), At: at}
}
