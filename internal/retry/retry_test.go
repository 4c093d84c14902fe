package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/retry"
)

func TestBackoffCeilingDoublesUpToMax(t *testing.T) {
	t.Parallel()
	b := retry.Backoff{Base: 100 * time.Millisecond, Max: time.Second}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond,
		4: 800 * time.Millisecond, 5: time.Second, 80: time.Second} {
		if got := b.Ceiling(n); got != want {
			t.Errorf("Ceiling(%d) = %s, want %s", n, got, want)
		}
	}
	if got := (retry.Backoff{}).Ceiling(3); got != 0 {
		t.Errorf("zero Backoff: Ceiling = %s, want 0", got)
	}
}

func TestBackoffWaitFollowsJitter(t *testing.T) {
	t.Parallel()
	const ceiling = 400 * time.Millisecond
	for _, c := range []struct {
		jitter   retry.Jitter
		low, top time.Duration // the wait lies in [low, top]
	}{
		{retry.Full, 0, ceiling - 1},
		{retry.Half, ceiling / 2, ceiling},
		{retry.None, ceiling, ceiling},
	} {
		b := retry.Backoff{Base: ceiling, Max: ceiling, Jitter: c.jitter}
		for range 200 {
			if w := b.Wait(1, 0); w < c.low || w > c.top {
				t.Fatalf("jitter %d: wait %s outside [%s, %s]", c.jitter, w, c.low, c.top)
			}
		}
	}
	// A longer Retry-After wins, capped at Max; a shorter one does not.
	b := retry.Backoff{Base: time.Millisecond, Max: 2 * time.Second, Jitter: retry.None}
	if w := b.Wait(1, time.Second); w != time.Second {
		t.Errorf("Retry-After 1s: wait %s", w)
	}
	if w := b.Wait(1, time.Minute); w != 2*time.Second {
		t.Errorf("Retry-After 1m: wait %s, want Max", w)
	}
	if w := (retry.Backoff{Base: time.Second, Max: time.Second, Jitter: retry.None}).Wait(1, time.Millisecond); w != time.Second {
		t.Errorf("short Retry-After: wait %s, want the backoff", w)
	}
}

var errFlaky = errors.New("flaky")

func TestDoRetriesUntilSuccess(t *testing.T) {
	t.Parallel()
	var calls, told int
	p := retry.Policy{Attempts: 5, OnRetry: func(attempt int, err error) {
		told++
		if attempt != told || !errors.Is(err, errFlaky) {
			t.Errorf("OnRetry(%d, %v) at retry %d", attempt, err, told)
		}
	}}
	err := p.Do(context.Background(), func(context.Context) error {
		if calls++; calls < 3 {
			return errFlaky
		}
		return nil
	})
	if err != nil || calls != 3 || told != 2 {
		t.Fatalf("err %v after %d calls, %d retries told; want nil after 3, 2 told", err, calls, told)
	}
}

func TestDoStopsAtAPermanentError(t *testing.T) {
	t.Parallel()
	permanent := errors.New("permanent")
	var calls int
	p := retry.Policy{Attempts: 5, Retryable: func(err error) bool { return errors.Is(err, errFlaky) }}
	err := p.Do(context.Background(), func(context.Context) error { calls++; return permanent })
	if err != permanent || calls != 1 {
		t.Fatalf("err %v after %d calls; want the permanent error, unwrapped, after 1", err, calls)
	}
}

func TestDoIsBoundedByAttemptsAndTime(t *testing.T) {
	t.Parallel()
	var calls int
	err := retry.Policy{Attempts: 3}.Do(context.Background(), func(context.Context) error { calls++; return errFlaky })
	ex, ok := errors.AsType[*retry.ExhaustedError](err)
	if !ok || ex.Attempts != 3 || calls != 3 || !errors.Is(err, errFlaky) {
		t.Fatalf("err %v after %d calls; want ExhaustedError of 3 attempts wrapping the last", err, calls)
	}

	start := time.Now()
	p := retry.Policy{Within: 50 * time.Millisecond, Backoff: retry.Backoff{Base: 5 * time.Millisecond, Max: 5 * time.Millisecond, Jitter: retry.None}}
	err = p.Do(context.Background(), func(context.Context) error { return errFlaky })
	if ex, ok := errors.AsType[*retry.ExhaustedError](err); !ok || ex.Elapsed < 50*time.Millisecond {
		t.Fatalf("err %v; want ExhaustedError after at least 50ms", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %s", took)
	}
}

func TestDoWaitsForRetryAfter(t *testing.T) {
	t.Parallel()
	var calls int
	start := time.Now()
	err := retry.Policy{Attempts: 2, Backoff: retry.Backoff{Max: time.Second}}.Do(context.Background(), func(context.Context) error {
		if calls++; calls == 1 {
			return retry.After(200*time.Millisecond, errFlaky)
		}
		return nil
	})
	if err != nil || time.Since(start) < 200*time.Millisecond {
		t.Fatalf("err %v after %s; want success after the 200ms Retry-After", err, time.Since(start))
	}
	if got := retry.RetryAfter(retry.After(time.Second, errFlaky)); got != time.Second {
		t.Fatalf("RetryAfter = %s", got)
	}
}

func TestDoEndsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	p := retry.Policy{Attempts: 100, Backoff: retry.Backoff{Base: time.Hour, Max: time.Hour, Jitter: retry.None},
		OnRetry: func(int, error) { cancel() }}
	start := time.Now()
	err := p.Do(ctx, func(context.Context) error { return errFlaky })
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %s; want context.Canceled at once", err, time.Since(start))
	}
}
