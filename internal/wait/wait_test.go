package wait

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	if !Until(time.Second, func() bool { return calls.Add(1) == 3 }) {
		t.Fatal("Until gave up on a condition that became true")
	}
	if got := calls.Load(); got != 3 {
		t.Fatalf("cond called %d times, want 3 (stop at the first true)", got)
	}
}

func TestUntilGivesUpAtTheDeadline(t *testing.T) {
	t.Parallel()
	start := time.Now()
	if Until(50*time.Millisecond, func() bool { return false }) {
		t.Fatal("Until reported a condition that never held")
	}
	if elapsed := time.Since(start); elapsed < 50*time.Millisecond {
		t.Fatalf("gave up after %s, before the 50ms deadline", elapsed)
	}
}
