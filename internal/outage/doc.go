// Package outage carries a process through its upstream's outages. A
// Tracker runs each call to the upstream under internal/retry: while the
// upstream is unavailable (upstream.ErrUnavailable: the client's own attempts
// all timed out, were refused, or got 5xx, 429, INTERNAL_ERROR or
// NOT_SYNCED_YET) the call is tried again with capped backoff, for ever or
// for a patience. Any other error is returned at once.
//
// The Tracker is shared by every call of a process, so it knows the
// upstream's state: it logs one line when the upstream becomes unreachable
// and one when it is back (never one per attempt), and State tells a health
// check whether, and since when, the upstream is cut off.
package outage
