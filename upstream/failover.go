package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/nearline/nearline/internal/retry"
)

// errNextEndpoint, from a try, moves on to the next endpoint at once: not a
// retry, for that endpoint cannot answer (the client's garbage-collected
// block).
var errNextEndpoint = errors.New("next endpoint")

// errEveryEndpoint ends a failover in which every endpoint said
// errNextEndpoint.
var errEveryEndpoint = errors.New("every endpoint moved on")

// endpointError is a try's failure that ends the failover.
type endpointError struct {
	endpoint string // as shown (Config.shown)
	kind     string // the attempt's failure kind (Fail*), "" when it was no attempt's
	err      error
}

func (e *endpointError) Error() string { return e.endpoint + ": " + e.err.Error() }
func (e *endpointError) Unwrap() error { return e.err }

// failover runs try on the endpoints in turn, from preferred (the one that
// answered last, which an answer updates), through one retry.Policy: the
// Client's calls and the Getter's fetches both go through it.
//
// A retryable *attemptError is counted (OnError) and logged to logger
// (msg, then kv), and tried again on the next endpoint after the backoff, or after a 429's
// Retry-After when there is no other endpoint to go to. errNextEndpoint
// moves on at once without spending an attempt. Any other error ends it.
// name begins every error it returns: "name on endpoint: err" for a
// failure that is final, ErrUnavailable when the attempts ran out, the
// context's error when it ended, errEveryEndpoint when every endpoint
// moved on.
func (c Config) failover(ctx context.Context, logger *slog.Logger, preferred *atomic.Int64, name, msg string, kv []any, try func(idx int) error) error {
	n := len(c.Endpoints)
	next := int(preferred.Load())
	movedOn := map[int]bool{}
	var last error
	policy := retry.Policy{
		Backoff:  c.backoff(),
		Attempts: c.MaxAttempts,
		Retryable: func(err error) bool {
			ae, ok := errors.AsType[*attemptError](err)
			return ok && ae.retryable
		},
	}
	attempts := 0
	err := policy.Do(ctx, func(ctx context.Context) error {
		for len(movedOn) < n {
			idx := next % n
			next++
			if movedOn[idx] {
				continue
			}
			err := try(idx)
			switch ae, isAttempt := errors.AsType[*attemptError](err); {
			case err == nil:
				preferred.Store(int64(idx))
				return nil
			case errors.Is(err, errNextEndpoint):
				movedOn[idx] = true
				continue
			case ctx.Err() != nil:
				return ctx.Err()
			case !isAttempt || !ae.retryable:
				kind := ""
				if isAttempt {
					err, kind = ae.err, ae.kind
				}
				return &endpointError{endpoint: c.shown(idx), kind: kind, err: err}
			default:
				attempts++
				c.OnError(ae.kind)
				shown := c.shown(idx)
				logger.Warn(msg, append(kv[:len(kv):len(kv)], "upstream", shown, "kind", ae.kind, "attempt", attempts, "err", ae.err)...)
				last = &endpointError{endpoint: shown, kind: ae.kind, err: ae.err}
				if n == 1 && ae.retryAfter > 0 {
					return retry.After(ae.retryAfter, ae)
				}
				return ae
			}
		}
		return errEveryEndpoint
	})
	var final *endpointError
	switch _, exhausted := errors.AsType[*retry.ExhaustedError](err); {
	case err == nil:
		return nil
	case ctx.Err() != nil && last != nil:
		return fmt.Errorf("%s: %w (last error: %v)", name, ctx.Err(), last)
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", name, ctx.Err())
	case exhausted:
		return fmt.Errorf("%s: %w: %d attempts failed, last: %w", name, ErrUnavailable, attempts, last)
	case errors.As(err, &final):
		return fmt.Errorf("%s on %s: %w", name, final.endpoint, final.err)
	}
	return err // errEveryEndpoint
}
