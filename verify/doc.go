// Package verify proves an archive against a NEAR node: it asks both the
// same read requests and reports, per method, how many answers were
// identical and the first differences. `nearline verify` wires it: the
// archive in-process (the archive backend through the rpcserve handler
// `nearline serve` uses, so its answers are byte for byte what serve
// sends) and the node over JSON-RPC.
//
// Rules a reader must know:
//   - Requests are drawn from the archive's own answers at the sampled
//     heights (Plan): blocks, their chunks (by height and by hash, for
//     every shard id any sampled layout named), transactions and receipts,
//     the accounts a height touched, the accounts told to use a global
//     contract and the accounts seen elsewhere in the sample, their keys
//     (and a key none has), contracts (call_function on view-like exports
//     of the code, or on known calls) and the global contracts distributed
//     or used. Every request names a height or hash; nothing asks for
//     "final", whose block differs between an archive and a node that is
//     ahead of it (PlanConfig.Edges adds it, and malformed requests, for
//     two servers at the same head).
//   - The plan is the one generator of "every method" requests: the
//     differential tests draw it from the simulator (verify/verifytest),
//     at every height in-process and as a seeded sample through the
//     binary.
//   - Two answers are identical when both are results that are equal JSON
//     documents (member order aside; numbers and strings compared as their
//     text), or both are errors whose `name` and `cause` are equal JSON
//     documents (the legacy `code`, `message` and `data` are not compared).
//   - A request the archive would forward upstream (rpcserve.ForwardError:
//     older than the archive, not stored) is counted as forwarded, not
//     compared: `nearline serve --forward-url` would pass it to the node.
//   - A node that cannot be reached, or answers something that is not a
//     JSON-RPC response, stops the run with ErrUnreachable; differences
//     never do.
package verify
