package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestCheckSchema: an empty database and one migrated short of the
// binary's newest migration are ErrNotMigrated, naming what is missing; a
// migrated one passes.
func TestCheckSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	require.GreaterOrEqual(t, latest, int64(10), "the migrations' numbers are read")

	url := storetest.NewEmptyDatabaseURL(t)
	s, err := store.Open(ctx, url, store.Config{MaxConns: 2}, nil)
	require.NoError(t, err)
	defer s.Close()
	err = s.CheckSchema(ctx)
	require.ErrorIs(t, err, store.ErrNotMigrated)
	require.ErrorContains(t, err, "no Nearline schema")

	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, store.MigrateTo(ctx, pool, nil, latest-1))
	var before int64 // latest-1, or the one below it when that number is not used
	require.NoError(t, pool.QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&before))
	err = s.CheckSchema(ctx)
	require.ErrorIs(t, err, store.ErrNotMigrated)
	require.ErrorContains(t, err, fmt.Sprintf("its schema is at version %d, this binary's at %d", before, latest))

	require.NoError(t, store.Migrate(ctx, url))
	require.NoError(t, s.CheckSchema(ctx))
	require.NoError(t, storetest.NewStore(t).CheckSchema(ctx))
}
