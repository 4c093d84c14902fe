// Package rpcserve is Nearline's JSON-RPC 2.0 protocol layer: one HTTP
// handler (NewHandler) that routes NEAR's read methods to a Backend, used by
// both `nearline serve` (the Postgres archive) and `nearline sim` (the
// simulated node), so routing, parameter parsing, envelopes and limits are
// the same for both by construction.
//
// Protocol rules a reader must know:
//   - Requests are POSTed to "/" with `method` in the body, or to
//     "/<method>" with the envelope, "{}" or an empty body. With
//     Config.APIKeys set, every path must be prefixed with "/<api-key>";
//     anything else is refused with HTTP 401.
//   - `jsonrpc` is optional (only "2.0" is allowed); `id` is optional
//     (default "dontcare") and echoed exactly as given. Every request gets a
//     response: there are no JSON-RPC notifications.
//   - A batch (JSON array) of 1..Config.MaxBatch requests is answered with an
//     array in the same order; an empty or oversized batch gets one error
//     envelope, HTTP 200.
//   - Responses are {"jsonrpc","result"|"error","id"} in that order. Errors
//     use NEAR's envelope (name, cause, code, message, data). A *near.Error
//     from the Backend is sent as is; any other error is logged once and
//     answered as a generic INTERNAL_ERROR without its text; panics likewise.
//   - GET /status answers the bare status JSON; GET /health answers 200 with
//     an empty body, or 503.
//   - Methods the archive cannot answer (send_tx, light client, network
//     info, ...) and Backend errors of type *ForwardError are forwarded to
//     Config.Forward verbatim when it is set.
//   - For the legacy `query` method, a contract failure (ContractError) and
//     a missing access key are answered as nearcore does: a result
//     {block_hash, block_height, error, logs}, not an error.
//   - Browsers may call from Config.CORSOrigins (default any origin).
//
// The archive Backend (Archive, NewArchive) answers from the Postgres store:
//   - `final`, `near-final` and `optimistic` all select the latest indexed
//     block: the archive only holds final blocks.
//   - A skipped height, a height above the head or an unknown hash is
//     UNKNOWN_BLOCK (query's form for `query`); a height below the archive's
//     first block (or, for `query`, below the start of state history) is
//     forwarded upstream, or refused with a message naming where the archive
//     starts. Before the first block: NOT_SYNCED_YET / NO_SYNCED_BLOCKS.
//   - State before the archive's start: with a genesis base (--genesis)
//     every account is known from the genesis height. Otherwise an account
//     is answered in full only from its base (snapshotted at the start by
//     --snapshot-accounts, or created or deleted in an indexed block). For
//     an account without one, view_account after its first stored change,
//     view_code of a stored code hash (or of no contract) and
//     view_access_key after the key's first stored change are answered;
//     everything else is forwarded upstream, or refused with UNKNOWN_BLOCK
//     naming the account and where the archive starts (NoAccountState).
//   - A read that hits a transient database error is tried once more
//     before answering INTERNAL_ERROR.
//   - `block`, `chunk`, tx statuses and configs are the upstream's JSON as
//     stored; query results are rebuilt from the state history tables with
//     the same near types the simulator encodes with.
//   - call_function runs the contract with one long-lived nearvm.Runtime
//     (compiled modules cached by code hash) over the contract's state at
//     the height.
//
// Serve (and ServeStore, for `nearline run`) run the HTTP server with a
// graceful shutdown.
package rpcserve
