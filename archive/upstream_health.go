package archive

import (
	"context"
	"fmt"
	"time"

	"github.com/nearline/nearline/internal/outage"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
)

// Upstream is the state of the upstream the indexer beside the server
// follows (*outage.Tracker implements it).
type Upstream interface {
	State() outage.State
}

// WithUpstream is backend as `nearline run` serves it: its health also
// fails while the indexer beside it is cut off from its upstream (the
// archive keeps answering from what is indexed).
func WithUpstream(backend rpcserve.Backend, upstream Upstream) rpcserve.Backend {
	return upstreamHealth{Backend: backend, upstream: upstream}
}

type upstreamHealth struct {
	rpcserve.Backend
	upstream Upstream
}

// Health is nearcore's NO_NEW_BLOCKS while the upstream is unreachable,
// saying so; otherwise the archive's own health (NOT_SYNCED_YET before the
// first block, NO_NEW_BLOCKS behind --health-max-lag).
func (h upstreamHealth) Health(ctx context.Context) error {
	st := h.upstream.State()
	if !st.Down {
		return h.Backend.Health(ctx)
	}
	down := time.Since(st.Since)
	return near.HandlerError("NO_NEW_BLOCKS",
		map[string]any{"elapsed": map[string]uint64{"secs": uint64(down / time.Second), "nanos": uint64(down % time.Second)}},
		fmt.Sprintf("The indexer cannot reach its upstream (for %s); answers come from the blocks indexed before", down.Round(time.Second)))
}
