package archive_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/archive"
	"github.com/nearline/nearline/internal/outage"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
)

type healthOf struct {
	rpcserve.Backend
	err error
}

func (b healthOf) Health(context.Context) error { return b.err }

type upstreamState outage.State

func (s upstreamState) State() outage.State { return outage.State(s) }

// TestWithUpstream: the archive's own health while the upstream is up;
// NO_NEW_BLOCKS saying how long it has been down while it is not.
func TestWithUpstream(t *testing.T) {
	t.Parallel()
	own := errors.New("the archive's own")
	up := archive.WithUpstream(healthOf{err: own}, upstreamState{Since: time.Now().Add(-time.Hour)})
	require.ErrorIs(t, up.Health(context.Background()), own)

	down := archive.WithUpstream(healthOf{}, upstreamState{Down: true, Since: time.Now().Add(-90 * time.Second)})
	err := down.Health(context.Background())
	var ne *near.Error
	require.ErrorAs(t, err, &ne)
	require.Equal(t, "NO_NEW_BLOCKS", ne.CauseName())
	require.ErrorContains(t, err, "The indexer cannot reach its upstream (for 1m30s)")
}
