package indexer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nearline/nearline/internal/upstream"
	"github.com/nearline/nearline/store"
)

// retryDB runs op until it succeeds, fails with an error that is not
// transient (store.IsTransient), ctx ends, or the database has been
// unavailable for DatabaseRetry. A batch whose commit failed was rolled
// back, so committing it again is safe.
func (ix *Indexer) retryDB(ctx context.Context, what string, op func() error) error {
	began := time.Now()
	wait := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || !store.IsTransient(err) || ctx.Err() != nil {
			return err
		}
		if time.Since(began) >= ix.cfg.DatabaseRetry {
			return fmt.Errorf("%s: database unavailable for %s: %w", what, time.Since(began).Round(time.Second), err)
		}
		ix.cfg.Metrics.UpstreamError("database")
		ix.logger.Warn("database unavailable; retrying", "op", what, "attempt", attempt, "err", err)
		if err := upstream.Sleep(ctx, wait/2+time.Duration(rand.Int64N(int64(wait/2)+1))); err != nil {
			return err
		}
		wait = min(2*wait, 5*time.Second)
	}
}
