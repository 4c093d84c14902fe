// Package nearvm runs NEAR smart contracts (WebAssembly) in pure Go on
// wazero, with NEAR's host function ABI, so that Nearline can answer
// call_function at any indexed height and the simulator can produce real
// contract state. The API, the gas metering's design, memory, the compile
// cache, errors and the known differences from nearcore:
// docs/internals.md.
//
// Invariants a reader must know:
//   - Call returns (*Outcome, nil) on success, (*Outcome so far,
//     *FunctionCallError) when the contract fails, (nil, error) when
//     Nearline fails (Storage, ctx, a closed runtime).
//   - View mode (Context.View) is call_function: what nearcore forbids in
//     views fails with ProhibitedInView; change mode (the simulator's)
//     returns writes, logs and receipts in Outcome, and drops writes and
//     receipts on failure.
//   - Every contract is instrumented when compiled: straight-line runs
//     charge gas from a global, and function entries and loop headers call
//     the tick, which checks ctx and the budget (Config.MaxGas or
//     Context.PrepaidGas). Runaway contracts stop; gas figures are close to
//     nearcore's, not equal.
//   - Memory may grow to Config.MemoryLimitPages, no further; linear
//     memories are pooled between calls.
//   - Compiled modules are cached by code hash, compiled once per hash at a
//     time, reference counted so eviction never closes one in use.
//   - *FunctionCallError keeps nearcore's variant and display text, and
//     renders both of the RPC's forms (MarshalJSON, RPCData).
package nearvm
