// Package rpcsource is the indexer's source over an upstream node's
// JSON-RPC: Source fetches one height's bundle.Bundle with many calls
// (block, its new chunks, EXPERIMENTAL_changes_in_block and the changes its
// effects name, EXPERIMENTAL_tx_status of each transaction, and the
// protocol config once per epoch) through an upstream.RPC. It imports
// neither the indexer, the store nor the document source. How it waits for
// statuses: docs/internals.md.
//
// Invariants a reader must know:
//   - UNKNOWN_BLOCK means skipped (bundle.ErrNoBlock) only when the final
//     head was at or past the height before it was asked; an upstream that
//     is behind is asked again (upstream.Waits.Behind).
//   - A block that repeats a chunk included below the floor given to
//     Prepare carries that chunk in Bundle.OlderChunks.
//   - Each Bundle makes up to Concurrency calls at once; MaxInFlight bounds
//     the calls of all bundles fetched together.
//   - A status not FINAL is re-fetched while the head advances, for at most
//     TxFinalWait; then it is stored as served and revisited by the indexer.
//   - The bundle that claims an epoch first (upstream.Epochs) carries its
//     protocol config; a bundle that fails releases the claim.
package rpcsource
