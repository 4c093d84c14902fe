// Package sim is a simulated NEAR node: a deterministic, sharded chain
// served over NEAR's JSON-RPC through rpcserve's protocol layer, with fault
// injection. It is the upstream of every test and benchmark and the way to
// try Nearline offline (`nearline sim`).
//
// Use from tests of other packages:
//
//	cfg := sim.DefaultConfig()
//	cfg.BlockTime, cfg.MaxHeight = 0, 500     // every block at once
//	node, err := sim.New(ctx, cfg, logger)            // genesis only, no block yet
//	defer node.Close(ctx)
//	err = node.Run(ctx)                       // or node.ProduceTo(ctx, 500)
//	srv := httptest.NewServer(node.Handler()) // JSON-RPC + faults
//	h, hash, ok := node.Head()
//	genesis := node.Genesis()                 // nearcore genesis.json (WriteGenesis)
//
// *Node implements rpcserve.Backend, so a test may also call its methods
// directly (node.Query, node.Block, ...). HandlerWithFaults serves the same
// chain with other faults; Config.Runtime lets many nodes share one nearvm
// runtime (and its compile cache); Produce/ProduceTo/NextHeight drive
// production step by step without Run.
//
// Invariants a reader must know:
//   - Determinism: the chain is a function of the Config fields marked
//     "chain" (Seed, Shards, GenesisHeight, GenesisTime, EpochLength,
//     ProtocolVersion, ChainID, SkipRate, MissingChunkRate, TxsPerBlock,
//     DeployRate, NoContracts, ForkAt, YieldTimeout, ReshardAt,
//     SplitShards).
//     Two nodes with the same ones serve byte-identical JSON for every block,
//     chunk, change, query and transaction. Timestamps derive from a fixed
//     genesis time, never from the clock; only `status` (uptime) and fault
//     injection look at the clock. Faults draw from their own random stream.
//   - Shards follow nearcore's ShardLayout V1 rule: an account belongs to the
//     shard whose boundary accounts bracket it (a boundary account is the
//     first account of the next shard); boundaries are chosen to split the
//     genesis accounts evenly and are published in genesis_config. With
//     ReshardAt, a shard splits at chosen epoch starts under a V2 layout
//     (layout.go); per-shard state in chain is by the shard index of the
//     layout being produced, chunk headers, documents and global code by
//     shard id, and reads of a past height use that height's layout.
//   - A skipped height has no block; the next block's prev_height/prev_hash
//     name the last block. A missing chunk is a false chunk_mask entry with the
//     shard's previous chunk header repeated (height_included lags).
//   - Execution follows nearcore's timing: a chunk's transactions are
//     converted in its block (transaction_processing changes); a receipt for
//     another account executes in a later block, once its shard's next chunk
//     carries it (the chunk's `receipts`) and the receiver's shard has a chunk;
//     a local receipt (signer == receiver) executes at once; refunds and
//     contract promises follow as receipts from "system" or the contract.
//     A callback (promise_then) waits, postponed, for its data receipts; data
//     receipts travel in chunks but have no outcome, as in nearcore.
//     Causes: transaction_processing, receipt_processing,
//     action_receipt_gas_reward, validator_accounts_update.
//   - Relayed transactions (a relayer's Delegate action) and yield/resume
//     run as nearcore runs them (metayield.go): a PromiseYield receipt is
//     listed by the outcome that made it but carried by no chunk; it runs
//     when a PromiseResume receipt brings its data, or after YieldTimeout
//     blocks with none. From protocol 86 it is an instant receipt, which
//     documents list in its chunk's instant_receipts (protocol86.go).
//   - State is kept as history (versions per account, key, code, data key),
//     so `query` answers at every height. Changes are listed in nearcore's
//     trie key order (accounts, code, access keys, data; then account id),
//     one change per key per cause; block_effects has one entry per changed
//     trie key.
//   - Contracts are the real WASM files in contracts/, deployed at genesis
//     and initialised, called and viewed through nearvm, so logs, return
//     values and storage layouts are the contracts' own.
//   - GCWindow > 0 makes a regular node: blocks and chunks older than
//     head − GCWindow answer UNKNOWN_BLOCK / UNKNOWN_CHUNK, queries there
//     GARBAGE_COLLECTED_BLOCK; before the first block the node answers
//     NOT_SYNCED_YET (NO_SYNCED_BLOCKS for query).
//   - Every block's and chunk's JSON is encoded once, when it is produced;
//     reads take a read lock and return the cached bytes. The shards of a
//     block execute in parallel (each touches only its own accounts and
//     receipt queues), with the same result as one after the other.
//   - Chunk headers report the previous application of their shard
//     (outcome_root, gas_used, balance_burnt, congestion_info), as
//     nearcore's do; congestion_info is counted from the shard's real
//     receipt queues (waiting, outgoing, postponed). Every block
//     is final at once (final, near-final and optimistic select the head)
//     unless Config.FinalityLag makes `final` trail the head while blocks are
//     produced.
package sim
