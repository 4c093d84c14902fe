// Package httpcalltest holds an upstream for tests of what requests carry
// to it: one that wants an API key as a bearer header, as FastNEAR does.
package httpcalltest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// KeyedUpstream serves Next to requests that carry Authorization: Bearer
// Key, and answers 401 to the others (with no Key, it lets every request
// through). It records the Authorization header of every request, refused
// or not. It is safe for concurrent use.
type KeyedUpstream struct {
	Next http.Handler
	Key  string

	mu   sync.Mutex
	seen []string
}

func (u *KeyedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got := r.Header.Get("Authorization")
	u.mu.Lock()
	u.seen = append(u.seen, got)
	u.mu.Unlock()
	if u.Key != "" && got != "Bearer "+u.Key {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	u.Next.ServeHTTP(w, r)
}

// Start serves u on a loopback port until t ends and returns its URL.
func (u *KeyedUpstream) Start(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Take returns the Authorization headers received since the last Take, in
// order ("" for a request without one), and forgets them.
func (u *KeyedUpstream) Take() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	seen := u.seen
	u.seen = nil
	return seen
}

// Distinct is Take's headers, each once, sorted.
func (u *KeyedUpstream) Distinct() []string {
	return slices.Compact(slices.Sorted(slices.Values(u.Take())))
}
