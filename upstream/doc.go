// Package upstream talks to a NEAR upstream: the JSON-RPC Client (Call,
// CallRaw, and Post for a request body as it is), the Getter of documents
// below base URLs, the final head, the genesis and protocol configs, the
// per-epoch claim on protocol configs both sources share (Epochs), and the
// wait for an upstream that is behind (Waits.Behind). Both sources and
// verify use it; near holds the wire types it speaks.
//
// Invariants a reader must know:
//   - Every ask-again loop here runs on internal/retry: failover and the
//     wait for a lagging upstream are retry.Policy loops.
//   - A failed attempt is retried (on the next endpoint first) only when
//     another attempt may pass: a timeout, a refused connection, 5xx, 429,
//     INTERNAL_ERROR, NOT_SYNCED_YET, a malformed body. A NEAR error the
//     caller must see (UNKNOWN_BLOCK, ...) is returned at once, as a
//     *near.Error; ErrUnavailable when the attempts ran out.
//   - A block an endpoint garbage-collected moves on to the next endpoint
//     without spending an attempt; ErrNeedsArchival when none has it.
//   - A bearer token goes to the configured endpoints only, never logged;
//     URLs are shown redacted.
//   - One claim per epoch: the first bundle to Claim an epoch carries its
//     protocol config; a bundle that is not returned Releases it.
package upstream
