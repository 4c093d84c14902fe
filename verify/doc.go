// Package verify proves an archive against a NEAR node: it asks both the
// same read requests and reports, per method, how many answers were
// identical and the first differences. `nearline verify` wires it: the
// archive in-process (the archive backend through the rpcserve handler
// `nearline serve` uses, so its answers are byte for byte what serve
// sends) and the node over JSON-RPC.
//
// Rules a reader must know:
//   - Requests are drawn from the archive's own answers at the sampled
//     heights (Plan): blocks, their chunks, transactions and receipts, the
//     accounts a height touched and the accounts seen elsewhere in the
//     sample, their keys, contracts (call_function on view-like exports of
//     the code) and the global contracts they use. Every request names a
//     height or hash; nothing asks for "final", whose block differs between
//     an archive and a node that is ahead of it.
//   - Two answers are identical when both are results that are equal JSON
//     documents (member order aside; numbers and strings compared as their
//     text), or both are errors whose `name` and `cause` are equal JSON
//     documents (the legacy `code`, `message` and `data` are not compared).
//   - A request the archive would forward upstream (rpcserve.ForwardError:
//     older than the archive, not stored) is counted as forwarded, not
//     compared: `nearline serve --upstream` would pass it to the node.
//   - A node that cannot be reached, or answers something that is not a
//     JSON-RPC response, stops the run with ErrUnreachable; differences
//     never do.
package verify
