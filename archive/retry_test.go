package archive

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/rpctest"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
)

// flakyStore fails the first `failures` LatestBlock reads with a dropped
// connection.
type flakyStore struct {
	Store
	failures atomic.Int32
	calls    atomic.Int32
}

func (s *flakyStore) LatestBlock(ctx context.Context) (uint64, string, error) {
	s.calls.Add(1)
	if s.failures.Add(-1) >= 0 {
		return 0, "", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}
	}
	return s.Store.LatestBlock(ctx)
}

func TestArchiveRetriesTransientDatabaseErrorOnce(t *testing.T) {
	t.Parallel()
	st := &flakyStore{Store: seedStore(t)}
	h := archiveHandler(t, st, rpcserve.Config{}, Config{})

	st.failures.Store(1)
	res, nerr := rpctest.Call(t, h, "block", map[string]any{"finality": "final"})
	require.Nil(t, nerr, "one transient error must be retried")
	require.NotEmpty(t, res)
	require.EqualValues(t, 2, st.calls.Load())

	st.calls.Store(0)
	st.failures.Store(2)
	_, nerr = rpctest.Call(t, h, "block", map[string]any{"finality": "final"})
	require.NotNil(t, nerr, "a second transient error is answered")
	require.Equal(t, near.KindInternal, nerr.Name)
	require.EqualValues(t, 2, st.calls.Load(), "retried exactly once")
}
