// Package near holds NEAR's JSON-RPC wire types: the views nearcore serves
// (block, chunk, transaction, receipt, execution outcome, state change,
// account, access key), the JSON-RPC 2.0 envelope, NEAR's error envelope,
// and the parsing of a request's params. Talking to an upstream is
// package upstream's.
//
// Invariants a reader must know:
//   - Heights, nonces and gas are uint64 and travel as JSON numbers; header
//     timestamps exceed 2^53 and are never decoded into float64.
//   - Balances and other u128 values travel as decimal strings (U128).
//   - Hashes and public keys are base58 text; contract args, code, state keys
//     and values are standard base64.
//   - Field order in the structs follows nearcore's, so encoding a view gives
//     the same object nearcore would serve.
//   - What a newer nearcore adds is kept, never dropped: the members of an
//     account, access key or genesis account beyond the modelled fields are
//     decoded into Extra and encoded back after them, in their order
//     (extra.go); unknown permissions, actions and receipts keep their JSON.
package near
