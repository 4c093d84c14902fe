package outage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/internal/retry"
	"github.com/nearline/nearline/upstream"
)

// DefaultBackoff spaces the tries of a call while its upstream is
// unavailable: from 1 s, doubling up to 30 s, half jitter. Each try is one
// call of the near client, which has already made its own attempts.
var DefaultBackoff = retry.Backoff{Base: time.Second, Max: 30 * time.Second, Jitter: retry.Half}

// Unavailable reports whether err is an outage of the upstream, worth
// waiting out.
func Unavailable(err error) bool { return errors.Is(err, upstream.ErrUnavailable) }

// State is the upstream as a Tracker last saw it.
type State struct {
	// Down is set from the first failed call of an outage until a call
	// succeeds.
	Down bool
	// Since is when the outage began (Down), or when the last one ended.
	Since time.Time
	// Failed counts the calls that failed in the outage.
	Failed int
}

// Tracker runs calls to one upstream through outages and knows its state.
// It is safe for concurrent use.
type Tracker struct {
	name    string
	backoff retry.Backoff
	logger  *slog.Logger

	mu    sync.Mutex
	state State
}

// Config configures a Tracker.
type Config struct {
	// Name says which upstream it is in the log lines: its URLs, say, as
	// httpcall.RedactURL shows them (no API key).
	Name string
	// Backoff spaces a call's tries. Default DefaultBackoff.
	Backoff retry.Backoff
}

// New returns a Tracker of an upstream that is up; logger receives its
// state changes (nil: none).
func New(cfg Config, logger *slog.Logger) *Tracker {
	if cfg.Backoff == (retry.Backoff{}) {
		cfg.Backoff = DefaultBackoff
	}
	return &Tracker{name: cfg.Name, backoff: cfg.Backoff, logger: logs.OrDiscard(logger), state: State{Since: time.Now()}}
}

// State returns the upstream's state.
func (t *Tracker) State() State {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state
}

// PatienceError is a call that ended because the upstream stayed
// unavailable for longer than the patience it was given.
type PatienceError struct {
	Patience time.Duration
	Elapsed  time.Duration
	Err      error // the last try's error
}

func (e *PatienceError) Error() string {
	return fmt.Sprintf("upstream unreachable for %s, longer than the patience of %s: %v",
		e.Elapsed.Round(time.Second), e.Patience, e.Err)
}

func (e *PatienceError) Unwrap() error { return e.Err }

// Do runs op until it succeeds, fails with an error that is not an outage
// (Unavailable), or ctx ends; those errors are returned as they are (one
// that ctx ended during wraps ctx's error too). While
// the upstream is unavailable op is tried again: for ever when patience is
// 0, else until patience has passed since the call began, when Do returns
// a *PatienceError. what names the call in the log line that starts an
// outage.
func (t *Tracker) Do(ctx context.Context, what string, patience time.Duration, op func(ctx context.Context) error) error {
	var began time.Time // of the last try
	policy := retry.Policy{
		Backoff:   t.backoff,
		Within:    patience,
		Retryable: Unavailable,
		OnRetry:   func(_ int, err error) { t.failed(what, began, err) },
	}
	err := policy.Do(ctx, func(ctx context.Context) error {
		began = time.Now()
		return op(ctx)
	})
	if ex, ok := errors.AsType[*retry.ExhaustedError](err); ok {
		t.failed(what, began, ex.Err)
		return &PatienceError{Patience: patience, Elapsed: ex.Elapsed, Err: ex.Err}
	}
	if err == nil {
		t.succeeded()
	}
	if ctxErr := ctx.Err(); ctxErr != nil && err != nil && !errors.Is(err, ctxErr) {
		// ctx ended while op ran: the call ends for that, whatever op's
		// own error says.
		return fmt.Errorf("%w: %w", ctxErr, err)
	}
	return err
}

// failed records a try begun at began that failed for an outage, logging
// the outage's start. A try begun before the last outage ended (it was
// answered, late, from the outage a later success already ended) starts
// no new one.
func (t *Tracker) failed(what string, began time.Time, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.state.Down && began.Before(t.state.Since) {
		return
	}
	t.state.Failed++
	if t.state.Down {
		return
	}
	t.state.Down, t.state.Since = true, time.Now()
	t.logger.Warn("upstream unreachable; waiting for it (one line when it is back)", "upstream", t.name, "op", what, "err", err)
}

// succeeded records a call that succeeded, logging the end of an outage.
func (t *Tracker) succeeded() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.state.Down {
		return
	}
	down := time.Since(t.state.Since)
	t.logger.Info("upstream back", "upstream", t.name, "down_for", down.Round(time.Millisecond), "failed_calls", t.state.Failed)
	t.state = State{Since: time.Now()}
}
