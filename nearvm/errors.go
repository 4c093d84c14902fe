package nearvm

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ErrorKind is the top-level variant of nearcore's (VM-side) FunctionCallError.
type ErrorKind string

// The variants of nearcore's FunctionCallError.
const (
	KindCompilation   ErrorKind = "CompilationError"
	KindLink          ErrorKind = "LinkError"
	KindMethodResolve ErrorKind = "MethodResolveError"
	KindWasmTrap      ErrorKind = "WasmTrap"
	KindHost          ErrorKind = "HostError"
)

// FunctionCallError is a contract failure: the contract (not Nearline) did
// something wrong. Its JSON form is nearcore's public FunctionCallError view,
// which collapses host errors, traps and link errors into an ExecutionError
// string; see MarshalJSON and RPCData.
type FunctionCallError struct {
	Kind ErrorKind
	// Variant is the inner variant name: "MethodNotFound", "Unreachable",
	// "GuestPanic", "PrepareError", ...
	Variant string
	// Message is the display text of the inner error, as nearcore's Display
	// prints it ("Smart contract panicked: boom", "Exceeded the prepaid gas.").
	Message string
	// debug is the inner error in Rust Debug form, e.g.
	// `GuestPanic { panic_msg: "boom" }` or `PrepareError(Deserialization)`.
	debug string
	// compilationJSON is the public JSON of a CompilationError's payload.
	compilationJSON json.RawMessage
}

// Error returns nearcore's Display text of the error.
func (e *FunctionCallError) Error() string {
	switch e.Kind {
	case KindWasmTrap:
		return "WebAssembly trap: " + e.Message
	case KindMethodResolve:
		return e.Variant
	}
	return e.Message
}

// ExecutionErrorText is the string nearcore stores for host errors, traps
// and link errors in its public view (`{"ExecutionError": "<this>"}`).
func (e *FunctionCallError) ExecutionErrorText() string {
	if e.Kind == KindLink {
		return "Link Error: " + e.Message
	}
	return e.Error()
}

// MarshalJSON renders nearcore's public FunctionCallError view, the value the
// RPC puts under cause.info.vm_error:
//
//	{"MethodResolveError":"MethodNotFound"}
//	{"CompilationError":{"PrepareError":"Deserialization"}}
//	{"ExecutionError":"Smart contract panicked: boom"}
func (e *FunctionCallError) MarshalJSON() ([]byte, error) {
	switch e.Kind {
	case KindMethodResolve:
		return json.Marshal(map[string]string{"MethodResolveError": e.Variant})
	case KindCompilation:
		return json.Marshal(map[string]json.RawMessage{"CompilationError": e.compilationJSON})
	}
	return json.Marshal(map[string]string{"ExecutionError": e.ExecutionErrorText()})
}

// publicDebug is the Rust Debug form of the public view, e.g.
// `ExecutionError("Smart contract panicked: boom")`.
func (e *FunctionCallError) publicDebug() string {
	switch e.Kind {
	case KindMethodResolve:
		return "MethodResolveError(" + e.Variant + ")"
	case KindCompilation:
		return "CompilationError(" + e.debug + ")"
	}
	return "ExecutionError(" + rustQuote(e.ExecutionErrorText()) + ")"
}

// RPCData is the text nearcore puts into the JSON-RPC error's legacy `data`
// string for EXPERIMENTAL_call_function (CONTRACT_EXECUTION_ERROR):
// `Function call returned an error: ExecutionError("Smart contract panicked: boom")`.
func (e *FunctionCallError) RPCData() string {
	return "Function call returned an error: " + e.publicDebug()
}

// rustQuote renders s as Rust's Debug of a string does: double quotes, with
// quotes, backslashes and control characters escaped.
func rustQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case 0:
			b.WriteString(`\0`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u{%x}`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func methodResolveError(variant string) *FunctionCallError {
	return &FunctionCallError{Kind: KindMethodResolve, Variant: variant, Message: variant}
}

// prepareError is CompilationError(PrepareError(variant)).
func prepareError(variant, display string) *FunctionCallError {
	raw, _ := json.Marshal(map[string]string{"PrepareError": variant})
	return &FunctionCallError{
		Kind: KindCompilation, Variant: "PrepareError",
		Message:         "PrepareError: " + display,
		debug:           "PrepareError(" + variant + ")",
		compilationJSON: raw,
	}
}

// compileError is CompilationError(WasmerCompileError { msg }), the variant
// nearcore reports when its engine rejects a module its own checks passed.
func compileError(msg string) *FunctionCallError {
	raw, _ := json.Marshal(map[string]map[string]string{"WasmerCompileError": {"msg": msg}})
	return &FunctionCallError{
		Kind: KindCompilation, Variant: "WasmerCompileError",
		Message:         "Wasmer compilation error: " + msg,
		debug:           "WasmerCompileError { msg: " + rustQuote(msg) + " }",
		compilationJSON: raw,
	}
}

func linkError(msg string) *FunctionCallError {
	return &FunctionCallError{Kind: KindLink, Variant: "LinkError", Message: msg}
}

// Wasm trap variants and their nearcore display text.
var trapDisplay = map[string]string{
	"Unreachable":                    "An `unreachable` opcode was executed.",
	"IncorrectCallIndirectSignature": "Call indirect incorrect signature trap.",
	"MemoryOutOfBounds":              "Memory out of bounds trap.",
	"CallIndirectOOB":                "Call indirect out of bounds trap.",
	"IllegalArithmetic":              "An arithmetic exception, e.g. divided by zero.",
	"MisalignedAtomicAccess":         "Misaligned atomic access trap.",
	"IndirectCallToNull":             "Indirect call to null.",
	"StackOverflow":                  "Stack overflow.",
	"GenericTrap":                    "Generic trap.",
}

func wasmTrap(variant string) *FunctionCallError {
	return &FunctionCallError{Kind: KindWasmTrap, Variant: variant, Message: trapDisplay[variant], debug: variant}
}

// hostError builds HostError(variant) with nearcore's display text and the
// Rust Debug form of its fields (fields are name/value pairs in order;
// strings are quoted, numbers are not).
func hostError(variant, display string, fields ...any) *FunctionCallError {
	debug := variant
	if len(fields) > 0 {
		parts := make([]string, 0, len(fields)/2)
		for i := 0; i+1 < len(fields); i += 2 {
			var v string
			switch x := fields[i+1].(type) {
			case string:
				v = rustQuote(x)
			case uint64:
				v = strconv.FormatUint(x, 10)
			default:
				v = fmt.Sprint(x)
			}
			parts = append(parts, fmt.Sprintf("%v: %s", fields[i], v))
		}
		debug += " { " + strings.Join(parts, ", ") + " }"
	}
	return &FunctionCallError{Kind: KindHost, Variant: variant, Message: display, debug: debug}
}

func errGuestPanic(msg string) *FunctionCallError {
	return hostError("GuestPanic", "Smart contract panicked: "+msg, "panic_msg", msg)
}

func errProhibitedInView(fn string) *FunctionCallError {
	return hostError("ProhibitedInView", fn+" is not allowed in view calls", "method_name", fn)
}

func errGasExceeded() *FunctionCallError {
	return hostError("GasExceeded", "Exceeded the prepaid gas.")
}

func errGasLimitExceeded() *FunctionCallError {
	return hostError("GasLimitExceeded", "Exceeded the maximum amount of gas allowed to burn per contract.")
}

func errMemoryAccessViolation() *FunctionCallError {
	return hostError("MemoryAccessViolation", "Accessed memory outside the bounds.")
}

func errBadUTF8() *FunctionCallError {
	return hostError("BadUTF8", "String encoding is bad UTF-8 sequence.")
}

func errBadUTF16() *FunctionCallError {
	return hostError("BadUTF16", "String encoding is bad UTF-16 sequence.")
}

func errInvalidRegisterID(id uint64) *FunctionCallError {
	return hostError("InvalidRegisterId", fmt.Sprintf("Accessed invalid register id: %d", id), "register_id", id)
}

func errIntegerOverflow() *FunctionCallError {
	return hostError("IntegerOverflow", "Integer overflow.")
}

func errInvalidPromiseIndex(idx uint64) *FunctionCallError {
	return hostError("InvalidPromiseIndex", fmt.Sprintf("%d does not correspond to existing promises", idx), "promise_idx", idx)
}

func errInvalidPromiseResultIndex(idx uint64) *FunctionCallError {
	return hostError("InvalidPromiseResultIndex", fmt.Sprintf("Accessed invalid promise result index: %d", idx), "result_idx", idx)
}

func errCannotAppendToJoint() *FunctionCallError {
	return hostError("CannotAppendActionToJointPromise", "Actions can only be appended to non-joint promise.")
}

func errCannotReturnJoint() *FunctionCallError {
	return hostError("CannotReturnJointPromise", "Returning joint promise is currently prohibited.")
}

func errInvalidAccountID() *FunctionCallError {
	return hostError("InvalidAccountId", "VM Logic returned an invalid account id")
}

func errInvalidMethodName() *FunctionCallError {
	return hostError("InvalidMethodName", "VM Logic returned an invalid method name")
}

func errInvalidPublicKey() *FunctionCallError {
	return hostError("InvalidPublicKey", "VM Logic provided an invalid public key")
}

func errDeprecated(fn string) *FunctionCallError {
	return hostError("Deprecated", "Attempted to call deprecated host function "+fn, "method_name", fn)
}

func errLimit(variant, what string, length, limit uint64) *FunctionCallError {
	return hostError(variant, fmt.Sprintf("The length of %s %d exceeds the limit %d", what, length, limit),
		"length", length, "limit", limit)
}

func errNumberOfLogsExceeded(limit uint64) *FunctionCallError {
	return hostError("NumberOfLogsExceeded", fmt.Sprintf("The number of logs will exceed the limit %d", limit), "limit", limit)
}

func errECRecover(msg string) *FunctionCallError {
	return hostError("ECRecoverError", "ECDSA recover error: "+msg, "msg", msg)
}

func errEd25519(msg string) *FunctionCallError {
	return hostError("Ed25519VerifyInvalidInput", "ED25519 signature verification error: "+msg, "msg", msg)
}

// ErrCodeDoesNotExist is CompilationError(CodeDoesNotExist), nearcore's
// error for a call on an account without contract code, for callers that
// find no code before calling Call.
func ErrCodeDoesNotExist(accountID string) *FunctionCallError {
	raw, _ := json.Marshal(map[string]map[string]string{"CodeDoesNotExist": {"account_id": accountID}})
	return &FunctionCallError{
		Kind: KindCompilation, Variant: "CodeDoesNotExist",
		Message:         "cannot find contract code for account " + accountID,
		debug:           "CodeDoesNotExist { account_id: " + rustQuote(accountID) + " }",
		compilationJSON: raw,
	}
}
