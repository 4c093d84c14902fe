package upstream

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
)

// TestBlockHash: a block's hash is read from its header; a block the
// upstream does not have is NoBlock, an outage is not.
func TestBlockHash(t *testing.T) {
	t.Parallel()
	srv, _ := rpcServer(t, func(_ int64, method string, w http.ResponseWriter) {
		okResult(w, `{"header":{"height":3,"hash":"GenesisHash"}}`)
	})
	c, err := NewClient(fastConfig(srv.URL), nil)
	require.NoError(t, err)
	hash, err := c.BlockHash(context.Background(), 3)
	require.NoError(t, err)
	require.Equal(t, "GenesisHash", hash)

	gone, _ := rpcServer(t, func(_ int64, _ string, w http.ResponseWriter) { nearError(w, near.UnknownBlock(near.HeightID(3))) })
	c, err = NewClient(fastConfig(gone.URL), nil)
	require.NoError(t, err)
	hash, err = c.BlockHash(context.Background(), 3)
	require.True(t, NoBlock(err), "%v", err)
	require.Empty(t, hash)

	require.True(t, NoBlock(errors.Join(errors.New("block"), ErrNeedsArchival)))
	require.False(t, NoBlock(ErrUnavailable))
	require.False(t, NoBlock(nil))
}
