// Package rpcsource is the indexer's source over an upstream node's
// JSON-RPC: NodeSource fetches one height's bundle.Bundle with many calls
// (block, the chunks new in it, EXPERIMENTAL_changes_in_block and the
// EXPERIMENTAL_changes its effects name, EXPERIMENTAL_tx_status of each
// transaction, and EXPERIMENTAL_protocol_config once per epoch). It
// satisfies indexer.Source without importing the indexer or the store.
//
// upstream.RPC, what NodeSource calls, is one raw JSON-RPC method call
// (*upstream.Client implements it; bench and tests wrap it to count or fail
// calls). NodeConfig
// follows the house rule: zero means the exported Default* constant for every
// field (the `nearline index` flags default to the same constants);
// NewNodeSource refuses a value out of range, naming it. MaxInFlight's -1 (no
// bound) is the one negative value with a meaning.
//
// Invariants a reader must know:
//   - UNKNOWN_BLOCK means "skipped" (bundle.ErrNoBlock) only when the
//     answering upstream's final head is at or past the height; an upstream
//     that is behind (after a failover) is asked again until it catches up,
//     at most BehindRetries times.
//   - A block that repeats a chunk included below the floor given to Prepare
//     (a missing chunk right after --from) carries that chunk in
//     Bundle.OlderChunks.
//   - Concurrency: each Bundle makes up to Concurrency calls at once
//     (chunks, changes, tx statuses); MaxInFlight bounds the calls of all
//     bundles fetched together.
//
// Transaction statuses: NodeSource fetches EXPERIMENTAL_tx_status for each
// transaction of a block's new chunks together with the block. A status
// whose final_execution_status is not FINAL yet (its receipts still run in
// later blocks) is re-fetched every TxPollInterval while the upstream's
// final head advances, for at most TxFinalWait; in follow mode the indexer
// therefore trails the head by the few blocks receipts take. When the head
// stalls (TxStallWait) or the wait runs out the status is stored as served,
// and the indexer revisits it later (TxStatus).
//
// Protocol config: the bundle that claims an epoch first (upstream.Epochs,
// the claim the document source shares; forgotten at each Prepare) carries
// its EXPERIMENTAL_protocol_config, keyed by epoch id in the store.
package rpcsource
