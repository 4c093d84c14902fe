// Package archive is the PostgreSQL archive's rpcserve.Backend: it answers
// NEAR's read methods from what the indexer stored, through a Store (the
// read API of *store.Store), and runs call_function on a nearvm.Runtime.
// `nearline serve` and `nearline run` build the store and the runtime, hand
// them to New, and hand the Backend to rpcserve.
//
// Rules a reader must know:
//   - `final`, `near-final` and `optimistic` all select the latest indexed
//     block: the archive only holds final blocks.
//   - A skipped height, a height above the head or an unknown hash is
//     UNKNOWN_BLOCK (query's form for `query`); a height below the archive's
//     first block (or, for `query`, below the start of state history) is an
//     rpcserve.ForwardError: forwarded upstream, or refused with a message
//     naming where the archive starts. Before the first block:
//     NOT_SYNCED_YET / NO_SYNCED_BLOCKS.
//   - Split backfills (ranges.go): a height between the indexers' ranges
//     is a ForwardError naming the heights not indexed yet; a query at a
//     height whose segment of joined ranges does not reach down to the
//     start of state history is a ForwardError naming the heights missing
//     below it. `final` selects the highest block of all ranges.
//   - State before the archive's start: with a genesis base (--genesis)
//     every account is known from the genesis height. Otherwise an account
//     is answered in full only from its base (snapshotted at the start by
//     --snapshot-accounts, or created or deleted in an indexed block). For
//     an account without one, view_account after its first stored change,
//     view_code of a stored code hash (or of no contract) and
//     view_access_key after the key's first stored change are answered;
//     everything else is forwarded upstream, or refused with UNKNOWN_BLOCK
//     naming the account and where the archive starts (NoAccountState).
//   - Every method whose read hits a transient database error
//     (store.IsTransient: a dropped connection, a restart) runs once more
//     before the error is returned (and answered as INTERNAL_ERROR).
//   - `block`, `chunk`, tx statuses and configs are the upstream's JSON as
//     stored; query results are rebuilt from the state history tables with
//     the same near types the simulator encodes with, the account and access
//     key members Nearline does not model written back from the tables'
//     extra columns in their place.
//   - call_function runs the contract on the one long-lived nearvm.Runtime
//     given to New (compiled modules cached by code hash) over the
//     contract's state at the height; a contract failure is a
//     near.ContractError.
package archive
