package rpcserve

import (
	"context"
	"time"

	"golang.org/x/sync/semaphore"
)

// bodyMemory is Config.MaxBodyMemory: the bytes of request bodies, and of
// answers larger than SmallBodyBytes, that the handler holds at once.
type bodyMemory struct {
	sem  *semaphore.Weighted
	size int64
	wait time.Duration
}

func newBodyMemory(size int64, wait time.Duration) *bodyMemory {
	return &bodyMemory{sem: semaphore.NewWeighted(size), size: size, wait: wait}
}

// reservation is what one request holds of the budget.
type reservation struct {
	budget *bodyMemory
	held   int64
}

// empty is a reservation that holds nothing yet.
func (b *bodyMemory) empty() *reservation { return &reservation{budget: b} }

// ensure makes r hold at least n bytes (the whole budget for more than
// it), waiting at most the queue wait for the rest; false when there was
// no room (or ctx ended). Up to SmallBodyBytes needs none: such bodies and
// answers are bounded by the number of connections instead.
func (r *reservation) ensure(ctx context.Context, n int64) bool {
	n = min(n, r.budget.size)
	if n <= SmallBodyBytes || n <= r.held {
		return true
	}
	more := n - r.held
	if !r.budget.sem.TryAcquire(more) {
		wait, cancel := context.WithTimeout(ctx, r.budget.wait)
		defer cancel()
		if r.budget.sem.Acquire(wait, more) != nil {
			return false
		}
	}
	r.held = n
	return true
}

// grow takes n more bytes if the budget has them now, without waiting.
func (r *reservation) grow(n int64) bool {
	if !r.budget.sem.TryAcquire(n) {
		return false
	}
	r.held += n
	return true
}

// resize makes r hold what an answer of n bytes needs: the excess is given
// back at once, more is waited for as ensure does.
func (r *reservation) resize(ctx context.Context, n int64) bool {
	if n <= SmallBodyBytes {
		n = 0
	}
	n = min(n, r.budget.size)
	if n < r.held {
		r.budget.sem.Release(r.held - n)
		r.held = n
		return true
	}
	return r.ensure(ctx, n)
}

// release gives back everything r holds.
func (r *reservation) release() {
	if r.held > 0 {
		r.budget.sem.Release(r.held)
		r.held = 0
	}
}
