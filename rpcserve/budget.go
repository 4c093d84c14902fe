package rpcserve

import (
	"context"
	"time"

	"golang.org/x/sync/semaphore"
)

// bodyMemory is Config.MaxBodyMemory: the bytes of request bodies, and of
// batch answers, that the handler holds at once.
type bodyMemory struct {
	sem  *semaphore.Weighted
	wait time.Duration
}

func newBodyMemory(size int64, wait time.Duration) *bodyMemory {
	return &bodyMemory{sem: semaphore.NewWeighted(size), wait: wait}
}

// reservation is what one request holds of the budget.
type reservation struct {
	budget *bodyMemory
	held   int64
}

// reserve takes room for a body of n bytes, waiting at most the queue wait;
// ok is false when there was none (or ctx ended). A body of at most
// SmallBodyBytes takes none.
func (b *bodyMemory) reserve(ctx context.Context, n int64) (res *reservation, ok bool) {
	res = &reservation{budget: b}
	if n <= SmallBodyBytes {
		return res, true
	}
	if !b.sem.TryAcquire(n) {
		wait, cancel := context.WithTimeout(ctx, b.wait)
		defer cancel()
		if b.sem.Acquire(wait, n) != nil {
			return nil, false
		}
	}
	res.held = n
	return res, true
}

// grow takes n more bytes if the budget has them now, without waiting.
func (r *reservation) grow(n int64) bool {
	if !r.budget.sem.TryAcquire(n) {
		return false
	}
	r.held += n
	return true
}

// release gives back everything r holds.
func (r *reservation) release() {
	if r.held > 0 {
		r.budget.sem.Release(r.held)
		r.held = 0
	}
}
