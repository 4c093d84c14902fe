// Package near holds NEAR's JSON-RPC wire types: the views nearcore serves
// (block, chunk, transaction, receipt, execution outcome, state change,
// account, access key), the JSON-RPC 2.0 envelope, NEAR's error envelope,
// and the JSON-RPC client that talks to an upstream node.
//
// Invariants a reader must know:
//   - Heights, nonces and gas are uint64 and travel as JSON numbers; header
//     timestamps exceed 2^53 and are never decoded into float64.
//   - Balances and other u128 values travel as decimal strings (U128).
//   - Hashes and public keys are base58 text; contract args, code, state keys
//     and values are standard base64.
//   - Field order in the structs follows nearcore's, so encoding a view gives
//     the same object nearcore would serve.
package near
