package main

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

// TestServeSessionsAreReadOnly: the archive `nearline serve` opens refuses
// a write in every session (25006), whatever its role may do.
func TestServeSessionsAreReadOnly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := store.Open(ctx, storetest.NewDatabaseURL(t), serveStoreConfig(2), nil)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Pool().Exec(ctx, `INSERT INTO skipped_heights (height) VALUES (1)`)
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "a write was not refused: %v", err)
	require.Equal(t, "25006", pgErr.Code)
}
