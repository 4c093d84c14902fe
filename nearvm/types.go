package nearvm

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/big"
)

// Storage is the contract state a call reads: the values of the called
// account's contract data keys (the raw keys the contract uses, without the
// trie prefix). The RPC server backs it by Postgres history at one height,
// the simulator by its in-memory state. Get reports found=false for a
// missing key; a non-nil error aborts the call with that error (not a
// FunctionCallError). Reads are cached per call, so Get is asked at most once
// per key per call. Storage must be safe for the duration of one call only.
type Storage interface {
	Get(ctx context.Context, key []byte) (value []byte, found bool, err error)
}

// U128 is an unsigned 128-bit integer (yoctoNEAR balances, stakes).
type U128 struct{ Hi, Lo uint64 }

// U128FromUint64 returns v as a U128.
func U128FromUint64(v uint64) U128 { return U128{Lo: v} }

var maxU128 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))

// U128FromBig converts b, failing when it is negative or wider than 128 bits.
func U128FromBig(b *big.Int) (U128, error) {
	if b == nil {
		return U128{}, nil
	}
	if b.Sign() < 0 || b.Cmp(maxU128) > 0 {
		return U128{}, fmt.Errorf("u128 out of range: %s", b)
	}
	var buf [16]byte
	b.FillBytes(buf[:])
	return U128{Hi: binary.BigEndian.Uint64(buf[:8]), Lo: binary.BigEndian.Uint64(buf[8:])}, nil
}

// ParseU128 parses a decimal string such as a balance from JSON.
func ParseU128(s string) (U128, error) {
	b, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return U128{}, fmt.Errorf("parse u128 %q: not a decimal number", s)
	}
	return U128FromBig(b)
}

// Big returns the value as a new big.Int.
func (u U128) Big() *big.Int {
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], u.Hi)
	binary.BigEndian.PutUint64(buf[8:], u.Lo)
	return new(big.Int).SetBytes(buf[:])
}

// String returns the decimal form.
func (u U128) String() string { return u.Big().String() }

// IsZero reports whether u == 0.
func (u U128) IsZero() bool { return u.Hi == 0 && u.Lo == 0 }

// littleEndian is the 16-byte layout contracts read and write.
func (u U128) littleEndian() []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b[:8], u.Lo)
	binary.LittleEndian.PutUint64(b[8:], u.Hi)
	return b
}

func u128FromLittleEndian(b []byte) U128 {
	return U128{Lo: binary.LittleEndian.Uint64(b[:8]), Hi: binary.LittleEndian.Uint64(b[8:16])}
}

// Context is what the contract can learn about its call through the host
// functions. For a view call (View=true) nearcore sets signer and
// predecessor to the contract account, the signer key to an empty ED25519
// key, the deposit to zero and the random seed to the state root; the
// functions that read signer, predecessor, prepaid or used gas fail anyway in
// view mode.
type Context struct {
	CurrentAccountID     string
	SignerAccountID      string
	SignerAccountPK      []byte // borsh-serialized public key: key type byte + key bytes
	PredecessorAccountID string
	Input                []byte // the method arguments (JSON for near-sdk contracts)
	BlockHeight          uint64
	BlockTimestamp       uint64 // nanoseconds since the Unix epoch
	EpochHeight          uint64
	StorageUsage         uint64 // the account's storage usage before the call
	AccountBalance       U128
	AccountLockedBalance U128
	AttachedDeposit      U128
	PrepaidGas           uint64 // 0 means Config.MaxGas; capped by Config.MaxGas
	RandomSeed           []byte // 32 bytes
	View                 bool
	// Validators maps validator account IDs to their stake in the call's epoch
	// (validator_stake, validator_total_stake).
	Validators map[string]U128
	// PromiseResults are the results of the receipts this call depends on
	// (callbacks), for promise_results_count and promise_result.
	PromiseResults []PromiseResult
	// ActionHash is the hash the data ids of the call's yields derive from
	// (YieldDataID); the runtime gives each action its own.
	ActionHash []byte
	// Yields answers promise_yield_resume; nil: no yield is waiting.
	Yields YieldState
}

// PromiseStatus is the state of a promise result as promise_result reports it.
type PromiseStatus uint8

// The promise_result return codes.
const (
	PromiseNotReady   PromiseStatus = 0
	PromiseSuccessful PromiseStatus = 1
	PromiseFailed     PromiseStatus = 2
)

// PromiseResult is one result a callback can read.
type PromiseResult struct {
	Status PromiseStatus
	Data   []byte // for PromiseSuccessful
}

// Write is one storage change made in change mode, in call order.
type Write struct {
	Key     []byte
	Value   []byte // nil when Removed
	Removed bool
}

// ActionKind names a receipt action as nearcore's action views do.
type ActionKind string

// Receipt action kinds.
const (
	ActionCreateAccount  ActionKind = "CreateAccount"
	ActionDeployContract ActionKind = "DeployContract"
	ActionFunctionCall   ActionKind = "FunctionCall"
	ActionTransfer       ActionKind = "Transfer"
	ActionStake          ActionKind = "Stake"
	ActionAddKey         ActionKind = "AddKey"
	ActionDeleteKey      ActionKind = "DeleteKey"
	ActionDeleteAccount  ActionKind = "DeleteAccount"
)

// Action is one action of a receipt a promise creates. Only the fields of its
// Kind are set.
type Action struct {
	Kind ActionKind
	// DeployContract
	Code []byte
	// FunctionCall
	MethodName string
	Args       []byte
	Gas        uint64
	GasWeight  uint64
	// FunctionCall and Transfer: Deposit; Stake: the stake.
	Deposit U128
	// Stake, AddKey, DeleteKey: borsh-serialized public key (type byte + key).
	PublicKey []byte
	// AddKey
	Nonce uint64
	// AddKey with a function-call permission (FullAccess=false).
	FullAccess  bool
	Allowance   *U128 // nil means unlimited
	ReceiverID  string
	MethodNames []string
	// DeleteAccount
	BeneficiaryID string
}

// PromiseReceipt is a receipt the call created through the promise API.
// DependsOn lists indexes into Outcome.Receipts whose results this receipt
// waits for (promise_then), in order.
//
// YieldDataID is set on a PromiseYield receipt (promise_yield_create): a
// call on the contract itself that waits for the data with that id, kept by
// the runtime instead of sent (nearcore's is_promise_yield).
type PromiseReceipt struct {
	ReceiverID  string
	Actions     []Action
	DependsOn   []int
	YieldDataID []byte
}

// Outcome is the result of a call. On a contract error Call returns the
// Outcome with the logs and gas so far (ReturnData, Writes and Receipts
// empty) together with the *FunctionCallError.
type Outcome struct {
	ReturnData []byte
	Logs       []string
	GasUsed    uint64 // gas burnt by the call (wasm instructions and host functions)
	// Writes are the storage writes and removes of a change call, in order.
	Writes []Write
	// Receipts are the receipts a change call's promises create.
	Receipts []PromiseReceipt
	// ReturnedReceipt is the index into Receipts whose result the call
	// returns (promise_return), or -1.
	ReturnedReceipt int
	// StorageUsage is the account's storage usage after the call's writes.
	StorageUsage uint64
	// Resumes are the yields the call resumed (promise_yield_resume that
	// returned 1), in order.
	Resumes []Resume
}

// ViewContext is the Context nearcore builds for call_function on accountID
// with args: the contract account as signer and predecessor, an empty
// ED25519 signer key, no deposit, the view gas limit, a zero random seed
// (nearcore uses the state root) and View set. The caller fills in the block
// (BlockHeight, BlockTimestamp, EpochHeight), the account (AccountBalance,
// AccountLockedBalance, StorageUsage) and Validators.
func ViewContext(accountID string, args []byte) Context {
	return Context{
		CurrentAccountID:     accountID,
		SignerAccountID:      accountID,
		PredecessorAccountID: accountID,
		SignerAccountPK:      make([]byte, 33), // key type 0 (ED25519), 32 zero bytes
		Input:                args,
		RandomSeed:           make([]byte, 32),
		View:                 true,
	}
}
