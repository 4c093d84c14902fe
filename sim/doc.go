// Package sim is a simulated NEAR node: a deterministic, sharded chain
// served over NEAR's JSON-RPC through rpcserve's protocol layer, with fault
// injection. It is the upstream of every test and benchmark and the way to
// try Nearline offline (`nearline sim`). *Node implements rpcserve.Backend.
// How to use it from a test, and how it executes: docs/internals.md.
//
// Invariants a reader must know:
//   - Determinism: the chain is a function of the Config fields marked
//     "chain"; two nodes with the same ones serve byte-identical JSON.
//     Timestamps derive from the genesis time; only status and faults look
//     at the clock, and faults draw from their own random stream.
//   - Shards follow nearcore's layouts (V1, and V2 with ReshardAt); reads of
//     a past height use that height's layout.
//   - A skipped height has no block; a missing chunk repeats the shard's
//     previous header.
//   - Execution follows nearcore's timing: receipts execute in later blocks
//     once carried by a chunk, local receipts at once; relayed transactions
//     and yield/resume run as nearcore runs them; from protocol 86 a yield
//     is an instant receipt, listed in its chunk's instant_receipts.
//   - State is kept as history, so query answers at every height; changes
//     are listed in nearcore's trie key order.
//   - Contracts are the real WASM files in contracts/, run through nearvm.
//   - GCWindow > 0 makes a regular node that forgets old heights.
//   - JSON is encoded once, when a block is produced; shards execute in
//     parallel with the result of one after the other.
package sim
