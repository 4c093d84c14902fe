// Package indexer is Nearline's follow loop: it plans heights, fetches each
// block's Bundle from a Source with bounded concurrency, checks that every
// block links to the last committed one, and commits batches to a Sink.
// Source and Sink are declared here, where they are consumed, and are the
// whole contract: nothing is discovered by type assertion. How the loop
// works: docs/internals.md.
//
// Invariants a reader must know:
//   - Backfill (Config.To set) and follow are the same loop; heights are
//     fetched only up to the upstream's final head, never busy-polled.
//   - Commit order is height order; a batch's data and the cursor commit in
//     one transaction, so a loop stopped at any instant resumes with no gap
//     and no duplicate.
//   - A block's prev_hash and prev_height must equal the last committed
//     block's; the heights between are recorded as skipped with the block
//     that links over them. A mismatch stops the loop with ErrContinuity.
//   - Transient database errors are retried for DatabaseRetry; an
//     unavailable upstream is waited out through Config.Upstream (for as
//     long as it lasts while following, for UpstreamPatience with To).
//   - With To set, Run returns once To (or the block proving it skipped) is
//     committed, or where its range meets another cursor's above it.
//   - Statuses stored before they were FINAL are revisited every
//     RevisitInterval and replaced once FINAL; one the upstream no longer
//     has keeps its stored status.
//   - Config: zero means the exported Default* for every field; New refuses
//     a value out of range, naming every one.
package indexer
