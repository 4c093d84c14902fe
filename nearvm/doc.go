// Package nearvm runs NEAR smart contracts (WebAssembly) in pure Go on
// wazero, with NEAR's host function ABI, so that Nearline can answer
// call_function at any indexed height and the simulator can produce real
// contract state.
//
// # API
//
//	rt, err := nearvm.New(ctx, nearvm.Config{}, nil)     // long-lived, safe for concurrent calls
//	defer rt.Close(ctx)
//	out, err := rt.Call(ctx, code, codeHash, "ft_balance_of", nearvm.Context{...}, storage)
//
// Call returns (*Outcome, nil) on success; (*Outcome with logs and gas so far,
// *FunctionCallError) when the contract fails; (nil, other error) when
// Nearline fails (Storage error, ctx cancelled, runtime closed). Storage is
// the one interface the caller implements: Get(ctx, key) over the account's
// contract data at the wanted height. Reads are cached per call; each call
// has its own module instance and its own registers.
//
// # View and change mode
//
// Context.View=true is call_function. As in nearcore, signer_account_id,
// signer_account_pk, predecessor_account_id, prepaid_gas, used_gas, every
// promise function, storage_write and storage_remove then fail with
// ProhibitedInView ("<fn> is not allowed in view calls"); attached_deposit,
// account_balance, block_timestamp, epoch_height and the rest answer from the
// Context. For call_function nearcore uses the contract account as signer and
// predecessor, an empty ED25519 key, zero deposit, prepaid gas = the view
// limit and the chunk's state root as random seed; fill Context the same way
// (RandomSeed may be any 32 bytes when the state root is unknown) and set
// AccountBalance, AccountLockedBalance, StorageUsage, BlockHeight,
// BlockTimestamp and EpochHeight from the indexed account and block: lockup
// and staking-pool views read them.
//
// Change mode (View=false) is for the simulator: writes and removes go to an
// overlay on top of Storage and come back in order in Outcome.Writes (with
// Outcome.StorageUsage following nearcore's accounting: key + value + 40
// bytes per record), logs in Outcome.Logs, and the receipts the promise API
// creates in Outcome.Receipts (receiver, actions, dependencies on earlier
// receipts; Outcome.ReturnedReceipt for promise_return). On failure the
// writes and receipts are dropped, the logs are kept. Callbacks read
// Context.PromiseResults.
//
// # Gas metering
//
// Contracts are instrumented when compiled (instrument.go, remap.go): every
// straight-line run of instructions subtracts regular_op_cost (822,756 gas)
// per instruction from a mutable i64 global, and every function entry and
// loop header calls a host function, the tick, when the global is negative.
// The global holds a slice of at most 1 Tgas; the tick moves more gas from
// the call's budget into it, or fails the call with GasLimitExceeded
// ("Exceeded the maximum amount of gas allowed to burn per contract.") when
// the budget is Config.MaxGas (a view's 300 Tgas) or GasExceeded ("Exceeded
// the prepaid gas.") when the call's smaller Context.PrepaidGas ran out. Host
// functions charge a base cost plus per-byte costs close to nearcore's.
// Exact nearcore gas figures are not reproduced; stopping runaway contracts
// is the point: an endless loop burns 300 Tgas in well under a second.
//
// Why this design: a wazero function listener sees calls, not loops, so a
// loop without calls would never stop, and listeners slow every call; the
// WithCloseOnContextDone option puts a call out of the compiled code at
// every loop iteration (about 30 ns each, and it is the only preemption
// point compiled wasm has). The tick gives both cancellation (it checks ctx)
// and a Go preemption point about every millisecond of guest execution, at
// the cost of one global decrement per basic block. Checking the counter
// only at function entries and loop headers keeps wazero's compile time
// near that of the original module (a check per block made its register
// allocator crawl on the 520 KB QuickJS contract). Adding the tick import
// renumbers functions, so the instrumenter rewrites calls, ref.func,
// exports, the start function and element segments, and drops the debug
// name section.
//
// # Memory
//
// nearcore gives a contract an imported env.memory (64 KiB pages, at most
// 2048 = 128 MiB). Contracts either import env.memory or, most of them,
// declare their own. An import becomes a defined memory with the declared
// minimum; a defined memory keeps its minimum; either may grow to
// Config.MemoryLimitPages, past which memory.grow returns -1 (Rust
// allocators then trap). Linear memories are pooled between calls
// (memory.go), which is what keeps a warm call near 0.1 ms.
//
// # Compile cache
//
// Compiled modules are cached by code hash (the caller's, or the code's
// sha256 when empty) in an LRU of Config.CacheSize entries; concurrent
// misses on one hash compile once (singleflight); entries are reference
// counted so eviction never closes a module a call still uses. Compile and
// link errors are cached too.
//
// # Errors
//
// *FunctionCallError keeps nearcore's variant (CompilationError, LinkError,
// MethodResolveError, WasmTrap, HostError) and display text, and offers the
// two renderings the RPC needs:
//   - MarshalJSON: nearcore's public view for cause.info.vm_error, e.g.
//     {"MethodResolveError":"MethodNotFound"},
//     {"CompilationError":{"PrepareError":"Deserialization"}} and, for host
//     errors, traps and link errors, {"ExecutionError":"<display text>"}.
//     Link errors read "Link Error: <msg>" there, as nearcore converts them.
//   - RPCData: the legacy data string of EXPERIMENTAL_call_function errors,
//     `Function call returned an error: ExecutionError("Smart contract panicked: ...")`.
//
// # Known differences from nearcore
//
//   - Gas figures are approximate (see above); used_gas and GasUsed differ
//     from nearcore's numbers.
//   - A memory starts at the contract's declared minimum, not nearcore's
//     initial 1024 pages, so memory.size may differ.
//   - wazero accepts more than nearcore's wasm feature set (bulk memory,
//     multi-value, reference types; not SIMD or threads). Contracts on chain
//     passed nearcore's stricter checks, so this only matters for new code.
//   - The storage iterator functions fail with HostError Deprecated, as in
//     current nearcore; alt_bn128 and bls12381 are not provided and fail to
//     link.
//   - Yield data ids are YieldDataID(Context.ActionHash, n), not nearcore's
//     derivation; the runtime that runs the call decides what a yield means
//     (Outcome.Receipts with YieldDataID, Outcome.Resumes).
//   - wazero's traps carry no exported sentinel, so they are told apart by
//     their fixed message text (trapFromError).
package nearvm
