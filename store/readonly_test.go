package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestReadOnlySessionsRefuseWrites: a store opened with ReadOnly reads, but
// every session refuses a write (read_only_sql_transaction, 25006), even
// as a role that may write, as `nearline serve` opens it.
func TestReadOnlySessionsRefuseWrites(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := storetest.NewDatabaseURL(t)
	s, err := store.Open(ctx, url, store.Config{MaxConns: 2, ReadOnly: true}, nil)
	require.NoError(t, err)
	defer s.Close()
	var setting string
	require.NoError(t, s.Pool().QueryRow(ctx, `SHOW default_transaction_read_only`).Scan(&setting))
	require.Equal(t, "on", setting)
	_, err = s.Pool().Exec(ctx, `DELETE FROM blocks`)
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "a write was not refused: %v", err)
	require.Equal(t, "25006", pgErr.Code)

	writable, err := store.Open(ctx, url, store.Config{MaxConns: 1}, nil)
	require.NoError(t, err)
	defer writable.Close()
	require.NoError(t, writable.Pool().QueryRow(ctx, `SHOW default_transaction_read_only`).Scan(&setting))
	require.Equal(t, "off", setting, "without ReadOnly, sessions are as the server sets them")
}
