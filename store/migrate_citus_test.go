package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestMigrateDistributedRefusesBeforeMigrating: a database without Citus
// is refused, and is left without a table.
func TestMigrateDistributedRefusesBeforeMigrating(t *testing.T) {
	t.Parallel()
	if storetest.Citus() {
		t.Skip("the test databases are Citus databases here: TestDistributeIsIdempotent covers Distribute on them")
	}
	url := storetest.NewEmptyDatabaseURL(t)
	ctx := context.Background()
	_, err := store.MigrateDistributed(ctx, url, nil)
	require.ErrorIs(t, err, store.ErrNotCitus)
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var tables int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables))
	require.Zero(t, tables, "nothing migrated")
}
