// Package wait is the tests' one way to wait for something: poll a
// condition until it holds or a deadline passes, instead of sleeping for a
// guessed time.
package wait

import (
	"testing"
	"time"
)

// Interval is how often For polls.
const Interval = 10 * time.Millisecond

// For polls cond every Interval until it returns true, and fails the test
// naming what it waited for once timeout has passed.
func For(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(timeout, cond) {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// Until polls cond every Interval until it returns true (true) or timeout
// passes (false). Use it where the caller decides what a timeout means.
func Until(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
		}
	}
}
