package sim

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	poll "github.com/nearline/nearline/internal/wait"
)

// TestLocalServesItsChainUntilCanceled: StartLocal's simulator answers on
// its URL once served, with its genesis.json written; Serve returns nil
// when ctx ends, and Close removes the genesis file.
func TestLocalServesItsChainUntilCanceled(t *testing.T) {
	t.Parallel()
	l, err := StartLocal(t.Context(), nil)
	require.NoError(t, err)
	_, err = os.Stat(l.GenesisPath())
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- l.Serve(ctx) }()
	poll.For(t, 30*time.Second, "the first block", func() bool {
		_, _, ok := l.Node.Head()
		return ok
	})
	head, _, _ := l.Node.Head()
	rpcResult(t, l.URL(), "block", map[string]any{"block_id": head})
	cancel()
	require.NoError(t, <-served)
	l.Close()
	_, err = os.Stat(l.GenesisPath())
	require.True(t, os.IsNotExist(err), "the genesis file is removed")
}
