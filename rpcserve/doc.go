// Package rpcserve is Nearline's JSON-RPC 2.0 protocol layer: one HTTP
// handler (NewHandler) that routes NEAR's read methods to a Backend, and
// Serve, which runs an HTTP server for a handler with a graceful shutdown.
// `nearline serve` and `nearline run` hand it package archive's Backend
// (the PostgreSQL archive), `nearline sim` the simulated node, so routing,
// parameter parsing, envelopes and limits are the same for both by
// construction. It knows nothing of how a Backend stores its data.
//
// Protocol rules a reader must know:
//   - Requests are POSTed to "/" with `method` in the body, or to
//     "/<method>" with the envelope (a `method` in it must match the path),
//     the params alone or "{}" / an empty body. On a path, an object with
//     none of the envelope's members (exact names) is the params; one
//     with some of them and other members but no `params` is a
//     PARSE_ERROR; an array holding no object is positional params, one
//     holding an object a batch. With Config.APIKeys set, every path must
//     be prefixed with "/<api-key>"; anything else is refused with HTTP 401.
//   - `jsonrpc` is optional (only "2.0" is allowed); `id` is optional
//     (default "dontcare") and echoed exactly as given. Every request gets a
//     response: there are no JSON-RPC notifications.
//   - Members are read as nearcore's serde reads them: by exact,
//     case-sensitive name ("METHOD" is not "method"; other members are
//     ignored), a repeated jsonrpc/id/method/params is a PARSE_ERROR (a
//     derived Deserialize's duplicate field), and of a repeated params
//     member the last wins (serde_json's Value). A body that is not valid
//     UTF-8 is not JSON (PARSE_ERROR, id null), so every answer is UTF-8.
//   - Hashes, keys and account ids are checked for length before they are
//     decoded (near.Base58DecodeMax), and an error repeats at most
//     near.MaxEcho bytes of any input value.
//   - Memory: a body over Config.MaxBodyBytes is refused from its declared
//     length (413, before `100 Continue`); a body over SmallBodyBytes is
//     reserved in Config.MaxBodyMemory as its bytes arrive (503 after
//     Config.QueueWait when there is no room), and so is an answer over
//     SmallBodyBytes until written. Headers are at most MaxHeaderBytes.
//     Serve keeps at most ServeConfig.MaxConnections connections open
//     (closing the quietest at the cap) and MaxConnectionsPerClient from
//     one address.
//   - Time: a concurrency slot is held only while a request is handled,
//     never while its body is read or its answer written; bodies and
//     answers must travel at minSendRate after sendGrace.
//   - Lists: a batch array is walked to Config.MaxBatch + 1 items at most,
//     and a list in params longer than Config.MaxListItems is a
//     PARSE_ERROR found before anything is decoded.
//   - A batch (JSON array) of 1..Config.MaxBatch requests is answered with an
//     array in the same order; an empty or oversized batch gets one error
//     envelope, HTTP 200. Once a batch's answers add up to more than
//     Config.MaxResponseBytes, its remaining items are not run and each is
//     answered with a PARSE_ERROR envelope (response too large) carrying its
//     id. A request that is not in a batch is not capped.
//   - Responses are {"jsonrpc","result"|"error","id"} in that order. Errors
//     use NEAR's envelope (name, cause, code, message, data). A *near.Error
//     from the Backend is sent as is; any other error is logged once and
//     answered as a generic INTERNAL_ERROR without its text; panics likewise.
//   - GET /status answers the bare status JSON; GET /health answers 200 with
//     an empty body, or 503. GET /metrics serves Config.Metrics when set.
//   - Methods no Backend answers (send_tx, light client, network info, ...),
//     the `query` request types no Backend answers (view_gas_key and
//     view_gas_key_list), and Backend errors of type *ForwardError are forwarded
//     to Config.Forward verbatim when it is set; without it they get
//     NotServed / QueryNotServed (HANDLER_ERROR, cause NOT_SERVED), never
//     METHOD_NOT_FOUND, which is only for names nearcore does not have.
//   - For the legacy `query` method, a missing access key is answered as
//     nearcore does: a result {block_hash, block_height, error, logs}, not an
//     error. A contract failure (near.ContractError) stays nearcore 2.x's
//     structured CONTRACT_EXECUTION_ERROR there too.
//   - Browsers may call from Config.CORSOrigins (default any origin).
package rpcserve
