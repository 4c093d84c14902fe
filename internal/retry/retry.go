package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Jitter says how a wait is drawn below its ceiling.
type Jitter int

const (
	// Full draws the wait uniformly in [0, ceiling): retries of many
	// callers spread the most.
	Full Jitter = iota
	// Half draws it in [ceiling/2, ceiling]: never much shorter than the
	// ceiling.
	Half
	// None waits the ceiling.
	None
)

// Backoff is capped exponential backoff. The ceiling of the wait before
// retry n (1-based) is Base·2^(n-1), at most Max; the zero Backoff does not
// wait.
type Backoff struct {
	Base, Max time.Duration
	Jitter    Jitter
}

// Ceiling returns the ceiling of the wait before retry n (1-based).
func (b Backoff) Ceiling(n int) time.Duration {
	ceiling := b.Base << min(max(n-1, 0), 30)
	if ceiling > b.Max || ceiling <= 0 {
		ceiling = b.Max
	}
	return max(ceiling, 0)
}

// Wait returns the wait before retry n (1-based): drawn below its ceiling
// as Jitter says, or the server's retryAfter (at most Max) when that is
// longer.
func (b Backoff) Wait(n int, retryAfter time.Duration) time.Duration {
	ceiling := b.Ceiling(n)
	var wait time.Duration
	switch {
	case ceiling <= 0:
	case b.Jitter == Full:
		wait = time.Duration(rand.Int64N(int64(ceiling)))
	case b.Jitter == Half:
		wait = ceiling/2 + time.Duration(rand.Int64N(int64(ceiling/2)+1))
	default:
		wait = ceiling
	}
	return max(wait, min(retryAfter, b.Max))
}

// Sleep waits before retry n (1-based), as Wait says, or until ctx ends.
func (b Backoff) Sleep(ctx context.Context, n int, retryAfter time.Duration) error {
	return Sleep(ctx, b.Wait(n, retryAfter))
}

// Sleep waits d or until ctx ends, and returns ctx's error if it ended.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// Policy is a retry loop: how long to wait between tries, how many tries
// or how much time, and which errors may pass on another try.
type Policy struct {
	Backoff
	// Attempts bounds the tries, the first included. Zero: no bound (then
	// Within should be set).
	Attempts int
	// Within bounds the time from the first try: a failure after it ends
	// the loop. Zero: no bound.
	Within time.Duration
	// Retryable reports whether an error may pass on another try. Nil:
	// every error.
	Retryable func(error) bool
	// OnRetry, when set, is told of each failure that is retried (attempt
	// is 1-based), before the wait.
	OnRetry func(attempt int, err error)
}

// ExhaustedError is a loop that ran out of attempts or time: Err is the last
// try's error.
type ExhaustedError struct {
	Attempts int
	Elapsed  time.Duration
	Err      error
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("%d attempts in %s: %v", e.Attempts, e.Elapsed.Round(time.Millisecond), e.Err)
}

func (e *ExhaustedError) Unwrap() error { return e.Err }

// After marks err as a failure the server asked to be retried after d (an
// HTTP Retry-After): Do waits at least that long (at most Backoff.Max).
func After(d time.Duration, err error) error { return &afterError{after: d, err: err} }

type afterError struct {
	after time.Duration
	err   error
}

func (e *afterError) Error() string { return e.err.Error() }
func (e *afterError) Unwrap() error { return e.err }

// RetryAfter returns the wait err asks for (After), or 0.
func RetryAfter(err error) time.Duration {
	var ae *afterError
	if errors.As(err, &ae) {
		return ae.after
	}
	return 0
}

// Do runs op until it succeeds. A failure ends the loop when Retryable
// rejects it or ctx has ended (op's error is returned as it is), or when
// the attempts or the time ran out (an *ExhaustedError wrapping it);
// otherwise Do waits (Backoff, or longer for an After error) and tries
// again. ctx ending during a wait returns ctx's error.
func (p Policy) Do(ctx context.Context, op func(ctx context.Context) error) error {
	began := time.Now()
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil || ctx.Err() != nil || (p.Retryable != nil && !p.Retryable(err)) {
			return err
		}
		if (p.Attempts > 0 && attempt >= p.Attempts) || (p.Within > 0 && time.Since(began) >= p.Within) {
			return &ExhaustedError{Attempts: attempt, Elapsed: time.Since(began), Err: err}
		}
		if p.OnRetry != nil {
			p.OnRetry(attempt, err)
		}
		if err := p.Sleep(ctx, attempt, RetryAfter(err)); err != nil {
			return err
		}
	}
}
