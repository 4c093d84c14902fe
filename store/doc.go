// Package store is Nearline's PostgreSQL archive: it writes batches of
// indexed blocks (Bundles) in one transaction each, and answers the read
// queries the JSON-RPC layer needs.
//
// Invariants a reader must know:
//   - Data and the indexer cursor commit in the same transaction (Commit), so
//     the archive holds exactly the blocks up to the cursor, never half a
//     block. Each cursor (Config.Cursor) is one range of heights
//     (ranges.go); several indexers fill disjoint ranges, and the commit
//     that makes two ranges meet checks that their blocks link.
//   - Rows keyed by height (blocks, chunks, transactions, receipts, actions,
//     state changes, block effects, tx statuses, outcomes) are deleted and
//     rewritten when a height at or below the cursor is committed again;
//     state history and contract code are upserted. Committing a height twice
//     therefore never duplicates a row.
//   - State history tables hold the value after each block that changed a
//     key, deletions included (deleted = true). The value at height H is the
//     newest row with block_height <= H: one backward index scan.
//   - State is complete for every account from history_start when its
//     source is 'genesis'. Otherwise only per account: account_bases holds
//     the height from which an account's whole state is stored (snapshot,
//     creation or deletion in an indexed block; see account_base.go for the
//     exact rules), recorded in the transaction that stores what makes it
//     true, and read with one primary-key probe (AccountBase).
//   - The explorer tables (explorer.go) are written by the same Commit,
//     unless Config.SkipEvents: ft_events, nft_events and mt_events hold
//     the token events of successful receipt outcomes, keyed and
//     partitioned by their transaction's height like execution_outcomes
//     (an outcome listed twice is parsed once; a malformed event log is
//     skipped and counted in CommitStats.MalformedEventLogs, never an
//     error). A row names its outcome by place (tx_index, outcome_index:
//     the execution_outcomes row) and holds no hash and no block time:
//     the views read them from execution_outcomes, transaction_statuses
//     and blocks (migration 00019).
//     account_activity is keyed by account (one range scan per page) and
//     rewritten by its source height, computed (migration 00021: a token
//     row names its event by its delay and places, not its receipt id).
//     UpdateTxStatus replaces a transaction's events and their activity.
//   - The state history, activity and token event tables hold account ids
//     as numbers (accounts.go, migration 00018): their rows are in
//     <table>_ids, and views with the tables' names give the names back. A
//     commit numbers the accounts it names in its own transaction; reads
//     look an account's number up first (and remember it) and name it by
//     that constant.
//   - Every Commit notifies NotifyChannel inside its transaction: a
//     notification means the blocks are committed.
//   - Every "not there" answer satisfies errors.Is(err, ErrNotFound).
//   - `view` columns hold the JSON exactly as the upstream node served it and
//     are returned as-is; StateChanges hands each change's stored JSON back
//     in its Raw, and account_history.extra and access_key_history.extra
//     keep the account and access key members Nearline does not model (from
//     changes, genesis records and snapshots alike), NULL when there are none.
//   - What Nearline does not model never fails a commit: a state change type
//     it does not know is stored in state_changes without history rows; a
//     receipt kind, action or access-key permission it does not know is
//     kept as served. CommitStats.Unknown counts them by kind.
package store
