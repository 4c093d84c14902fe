// Package httpcalltest holds what tests of the requests an upstream
// receives share: a Log of what each request carried, and an upstream
// that wants an API key as a bearer header, as FastNEAR does.
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

	Log // the Authorization header of each request ("" for none)
}

// Log records a string per request (what it carried), in order. It is
// safe for concurrent use; its zero value is empty.
type Log struct {
	mu   sync.Mutex
	seen []string
}

// Add records s.
func (l *Log) Add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, s)
}

// Take returns what was recorded since the last Take, in order, and
// forgets it.
func (l *Log) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := l.seen
	l.seen = nil
	return seen
}

// Distinct is Take's strings, each once, sorted.
func (l *Log) Distinct() []string {
	return slices.Compact(slices.Sorted(slices.Values(l.Take())))
}

func (u *KeyedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got := r.Header.Get("Authorization")
	u.Add(got)
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
