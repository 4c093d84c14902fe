package indexer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nearline/nearline/internal/retry"
	"github.com/nearline/nearline/store"
)

// databaseBackoff spaces the retries of a Sink call: from 100ms, doubling up
// to 5s, half jitter.
var databaseBackoff = retry.Backoff{Base: 100 * time.Millisecond, Max: 5 * time.Second, Jitter: retry.Half}

// retryDB runs op until it succeeds, fails with an error that is not
// transient (store.IsTransient), ctx ends, or the database has been
// unavailable for DatabaseRetry. A batch whose commit failed was rolled
// back, so committing it again is safe.
func (ix *Indexer) retryDB(ctx context.Context, what string, op func() error) error {
	policy := retry.Policy{
		Backoff:   databaseBackoff,
		Within:    ix.cfg.DatabaseRetry,
		Retryable: store.IsTransient,
		OnRetry: func(attempt int, err error) {
			ix.cfg.Metrics.databaseRetry()
			ix.logger.Warn("database unavailable; retrying", "op", what, "attempt", attempt, "err", err)
		},
	}
	err := policy.Do(ctx, func(context.Context) error { return op() })
	if ex, ok := errors.AsType[*retry.ExhaustedError](err); ok {
		return fmt.Errorf("%s: database unavailable for %s: %w", what, ex.Elapsed.Round(time.Second), ex.Err)
	}
	return err
}
