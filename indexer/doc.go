// Package indexer is Nearline's follow loop: it plans heights, fetches each
// block's Bundle from a Source with bounded concurrency, checks that every
// block links to the last committed one, and commits batches to a Sink.
//
// The contract: Source (the upstream: final head, bundles, genesis config,
// the chunk floor it is told by Prepare, transaction statuses fetched
// again) and Sink (the archive: cursor, the blocks around a height, the
// earliest block, commits, genesis config, statuses stored before they were
// final) are the whole of what the loop uses. Nothing is discovered by type
// assertion: a Sink or Source either does all of it or does not compile as
// one. NodeSource (JSON-RPC) and *store.Store are the implementations;
// tests hand in fakes.
//
// Invariants a reader must know:
//   - Backfill (Config.To set) and follow (no To) are the same loop. Heights
//     are fetched only up to the upstream's final head, which is polled every
//     PollInterval while caught up (never busy-polled).
//   - Commit order is height order. Each batch's data and the cursor commit
//     in one transaction, so a loop stopped at any instant (ctx cancelled,
//     process killed, Sink failing mid-commit) resumes after the last
//     committed block with no gap and no duplicate; re-indexing a height
//     rewrites its rows.
//   - Continuity: a block's prev_hash and prev_height must equal the last
//     committed block's hash and height. The heights between them are the
//     ones the upstream answered UNKNOWN_BLOCK for (below the final head);
//     they are recorded as skipped with the block that links over them, so a
//     skipped height is distinct from one not fetched yet. A mismatch stops
//     the loop with an error wrapping ErrContinuity that names the height and
//     both hashes; the blocks before it are committed, nothing after.
//   - Sink calls failing with a transient database error (store.IsTransient)
//     are retried with backoff for up to DatabaseRetry; a failed commit was
//     rolled back, so the batch is committed again whole.
//   - With To set, Run returns once To is committed; if the chain skipped To,
//     once the next block (which proves it skipped) is committed. A run whose
//     To is already committed returns at once.
//   - NodeSource treats UNKNOWN_BLOCK as "skipped" only when the answering
//     upstream's final head is at or past the height; an upstream that is
//     behind (after a failover) is asked again until it catches up.
//   - A block that repeats a chunk included before the archive's first block
//     (a missing chunk right after --from) also stores that chunk's view, so
//     `chunk` by block and shard answers there too.
//   - Concurrency: Workers blocks are fetched at once, each with up to
//     NodeConfig.Concurrency calls in flight (chunks, changes, tx statuses).
//
// Transaction statuses: NodeSource fetches EXPERIMENTAL_tx_status for each
// transaction of a block's new chunks together with the block. A status
// whose final_execution_status is not FINAL yet (its receipts still run in
// later blocks) is re-fetched every TxPollInterval while the upstream's final
// head advances, for at most TxFinalWait (DefaultTxFinalWait); in follow mode the indexer
// therefore trails the head by the few blocks receipts take. When the head
// stalls or the wait runs out the status is stored as served, and its
// final_execution_status column says it was not final. Such statuses are
// revisited: every RevisitInterval (DefaultRevisitInterval) between commits, the loop fetches up
// to 100 of them again and replaces those that are FINAL now, with their
// execution outcomes.
//
// Protocol config: NodeSource fetches EXPERIMENTAL_protocol_config once per
// epoch it sees (per process), keyed by epoch id in the store.
package indexer
