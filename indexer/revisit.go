package indexer

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
)

// revisitBatch bounds the statuses re-fetched per pass.
const revisitBatch = 100

// revisitTxStatuses re-fetches statuses stored before they were FINAL
// (included at or below height) and stores the newer answers.
func (ix *Indexer) revisitTxStatuses(ctx context.Context, height uint64) error {
	src, sink := ix.src, ix.sink
	refs, err := sink.PendingTxStatuses(ctx, height, revisitBatch)
	if err != nil || len(refs) == 0 {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(ix.cfg.Workers)
	updated := make([]bool, len(refs))
	for i, ref := range refs {
		g.Go(func() error {
			var st bundle.TxStatus
			var final bool
			err := ix.callUpstream(gctx, "revisit tx status", func(ctx context.Context) (err error) {
				st, final, err = src.TxStatus(ctx, ref)
				return err
			})
			var ne *near.Error
			if errors.As(err, &ne) {
				// Gone from the upstream (garbage-collected): keep what we have.
				return nil
			}
			if err != nil {
				return fmt.Errorf("revisit tx %s: %w", ref.TxHash, err)
			}
			if !final {
				return nil
			}
			updated[i] = true
			return sink.UpdateTxStatus(gctx, ref, st)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	n := 0
	for _, u := range updated {
		if u {
			n++
		}
	}
	ix.logger.Debug("revisited tx statuses", "pending", len(refs), "now_final", n)
	return nil
}
