package outage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nearline/nearline/internal/httpcall"
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
	flags   map[string]string
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
	// Flags maps each flag the upstream's URLs came from (such as
	// --upstream and --rpc-upstream) to its comma-separated URLs, so that
	// the log lines and errors say which flag a URL that failed came
	// from. Default none.
	Flags map[string]string
	// Backoff spaces a call's tries. Default DefaultBackoff.
	Backoff retry.Backoff
}

// New returns a Tracker of an upstream that is up; logger receives its
// state changes (nil: none).
func New(cfg Config, logger *slog.Logger) *Tracker {
	if cfg.Backoff == (retry.Backoff{}) {
		cfg.Backoff = DefaultBackoff
	}
	return &Tracker{name: cfg.Name, flags: cfg.Flags, backoff: cfg.Backoff, logger: logs.OrDiscard(logger), state: State{Since: time.Now()}}
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
	// Failed says what the last try ran into, when its error names the
	// URL that failed: the flag and URL, and the kind of failure.
	Failed string
	Err    error // the last try's error
}

func (e *PatienceError) Error() string {
	if e.Failed != "" {
		return fmt.Sprintf("upstream unreachable for %s, longer than the patience of %s: %s: %v",
			e.Elapsed.Round(time.Second), e.Patience, e.Failed, e.Err)
	}
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
		failed := ""
		if f, ok := upstream.Diagnose(ex.Err); ok {
			failed = t.describe(f)
		}
		return &PatienceError{Patience: patience, Elapsed: ex.Elapsed, Failed: failed, Err: ex.Err}
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
	attrs := []any{"upstream", t.name, "op", what}
	if f, ok := upstream.Diagnose(err); ok {
		attrs = []any{"upstream", f.Endpoint, "flag", t.flagOf(f), "host", f.Host, "failure", f.Kind, "op", what}
	}
	t.logger.Warn("upstream unreachable; waiting for it (one line when it is back)", append(attrs, "err", err)...)
}

// flagOf names the flag the URL that failed came from ("" when no flag of
// Config.Flags lists it): the flag that lists the URL itself, else the
// one that lists its host.
func (t *Tracker) flagOf(f upstream.Failure) string {
	byHost := ""
	for _, flag := range slices.Sorted(maps.Keys(t.flags)) {
		for u := range strings.SplitSeq(t.flags[flag], ",") {
			u = strings.TrimSpace(u)
			if u == "" {
				continue
			}
			if httpcall.RedactURL(u) == f.Endpoint {
				return flag
			}
			if parsed, err := url.Parse(u); err == nil && parsed.Hostname() == f.Host && byHost == "" {
				byHost = flag
			}
		}
	}
	return byHost
}

// describe says in words what a failure was and where it came from.
func (t *Tracker) describe(f upstream.Failure) string {
	where := f.Endpoint
	if flag := t.flagOf(f); flag != "" {
		where = flag + " " + f.Endpoint
	}
	switch f.Kind {
	case upstream.FailureDNS:
		return fmt.Sprintf("%s: DNS: the name %s does not resolve (a typo in the URL, or no DNS here)", where, f.Host)
	case upstream.FailureRefused:
		return fmt.Sprintf("%s: refused: nothing accepts connections at %s's port", where, f.Host)
	case upstream.FailureTLS:
		return fmt.Sprintf("%s: TLS: the handshake with %s failed (its certificate, or plain HTTP on an https URL)", where, f.Host)
	case upstream.FailureHTTP:
		return fmt.Sprintf("%s: HTTP: %s answered with an HTTP error or a body that is not JSON-RPC", where, f.Host)
	case upstream.FailureTimeout:
		return fmt.Sprintf("%s: timeout: %s did not answer within --upstream-timeout", where, f.Host)
	}
	return fmt.Sprintf("%s: network: %s could not be reached", where, f.Host)
}

// NeverAnswered is the error of an archive's first start whose upstream
// never answered: err when it is no *PatienceError, else err in words
// that say the command stops rather than wait, and what to check.
func NeverAnswered(err error) error {
	pe, ok := errors.AsType[*PatienceError](err)
	if !ok {
		return err
	}
	return fmt.Errorf("the upstream never answered this archive's first start within --upstream-patience %s, "+
		"so the command stops rather than wait for an upstream that may not exist; check the URL and its flag, "+
		"or raise --upstream-patience (an archive that has followed before waits out outages for as long as they last): %w",
		pe.Patience, err)
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
