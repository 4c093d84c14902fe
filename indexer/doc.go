// Package indexer is Nearline's follow loop: it plans heights, fetches each
// block's Bundle from a Source with bounded concurrency, checks that every
// block links to the last committed one, and commits batches to a Sink.
// Three goroutines form the pipeline: produce (fetch batches of heights),
// link (check continuity, prepare the batch's rows) and consume (write it),
// so the CPU work of one batch overlaps the database work of the last.
//
// The contract is two interfaces, declared here where they are consumed;
// they are the whole of what the package uses, and nothing is discovered by
// type assertion (a Source or Sink either does all of it or does not
// compile as one):
//   - Source, the upstream as the loop sees it: FinalHead (how far to
//     fetch), Bundle (one height's block with its chunks, changes and tx
//     statuses, or bundle.ErrNoBlock), GenesisConfig (the first height of an empty
//     archive), Prepare (told the archive's lowest height at each Run, so a
//     missing chunk repeating one from below it is fetched) and TxStatus
//     (a status stored before it was FINAL, fetched again).
//     rpcsource.NodeSource is the JSON-RPC implementation; docsource.DocSource
//     builds the same Bundles from block documents.
//   - Sink, the archive: Range and LinkBelow (where the cursor's range
//     resumes, what the next block must link to and the floor given to
//     Prepare), RangeAbove (where the range meets another cursor's),
//     Prepare and Write (a batch made into rows without the
//     database, then written with the cursor in one transaction: the loop
//     prepares a batch while the one before it is written),
//     PutGenesisConfig, and PendingTxStatuses with UpdateTxStatus (the
//     statuses to revisit and their FINAL replacements). *store.Store is the
//     implementation.
//
// Tests hand in fakes of both. Config follows one rule: zero means the
// exported Default* constant for every field (the `nearline index` flags
// default to the same constants); New refuses a value out of range, naming
// it.
//
// Invariants a reader must know:
//   - Backfill (Config.To set) and follow (no To) are the same loop. Heights
//     are fetched only up to the upstream's final head, which is polled every
//     PollInterval while caught up (never busy-polled) and every 30 s while
//     more than a batch below it (each poll is a request upstream).
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
//     are retried with backoff for up to DatabaseRetry, each retry counted in
//     nearline_database_retries_total; a failed commit was rolled back, so
//     the batch is committed again whole.
//   - Source calls failing because the upstream is unavailable
//     (upstream.ErrUnavailable: the client's attempts all failed) run through
//     Config.Upstream, an outage.Tracker: while following (no To) they are
//     tried again with capped backoff for as long as the outage lasts; with
//     To, for UpstreamPatience, then Run fails. One line is logged as an
//     outage starts and one as it ends. A final head below the archive's
//     cursor (an upstream restarted from an older state) is waited for,
//     said once.
//   - With To set, Run returns once To is committed; if the chain skipped To,
//     once the next block (which proves it skipped) is committed. A run whose
//     To is already committed returns at once.
//   - Ranges: each Indexer advances one cursor (store.Config.Cursor), so
//     several fill disjoint height ranges of one archive. A run ends where
//     its range meets another cursor's range above it, as if To were the
//     height below that range; the commit that makes two ranges meet
//     checks the link between them (store.Write), so a split backfill is
//     as continuous as one indexer's.
//   - A block that repeats a chunk included before the archive's first block
//     (a missing chunk right after --from) also stores that chunk's view, so
//     `chunk` by block and shard answers there too (Source.Prepare).
//   - Concurrency: Workers blocks are fetched at once; a source bounds the
//     calls each makes.
//
// Transaction statuses: a source may store a status whose
// final_execution_status is not FINAL yet (its receipts still run in later
// blocks; see rpcsource). Such statuses are revisited: every RevisitInterval between commits, the loop asks the Sink
// for up to 100 of them (PendingTxStatuses), fetches each again from the
// Source (TxStatus) and has the Sink replace those that are FINAL now, with
// their execution outcomes (UpdateTxStatus). One the upstream no longer has
// (a *near.Error) keeps its stored status; any other error stops Run.
package indexer
