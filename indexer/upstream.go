package indexer

import (
	"context"
	"time"
)

// callUpstream runs a Source call through upstream outages: waited out for
// ever while following the head, for UpstreamPatience in a bounded run
// (Config.To). Config.Upstream logs the outage's start and end.
func (ix *Indexer) callUpstream(ctx context.Context, what string, op func(ctx context.Context) error) error {
	var patience time.Duration // 0: for ever
	if ix.cfg.To != nil {
		patience = ix.cfg.UpstreamPatience
	}
	return ix.cfg.Upstream.Do(ctx, what, patience, op)
}
