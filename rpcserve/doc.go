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
package rpcserve
