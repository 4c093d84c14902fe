package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

func countTables(t *testing.T, url string) (tables int, versions int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'goose_db_version'`).Scan(&tables))
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`).Scan(&versions))
	return tables, versions
}

func TestMigrateIdempotent(t *testing.T) {
	t.Parallel()
	url := storetest.NewEmptyDatabaseURL(t)
	ctx := context.Background()
	require.NoError(t, store.Migrate(ctx, url))
	tables1, versions1 := countTables(t, url)
	require.NoError(t, store.Migrate(ctx, url))
	tables2, versions2 := countTables(t, url)
	require.Equal(t, tables1, tables2)
	require.Equal(t, versions1, versions2)
	require.GreaterOrEqual(t, tables1, 19)
	require.GreaterOrEqual(t, versions1, 1)
}

func TestMigrateConcurrent(t *testing.T) {
	t.Parallel()
	url := storetest.NewEmptyDatabaseURL(t)
	ctx := context.Background()
	const runners = 4
	errs := make([]error, runners)
	var wg sync.WaitGroup
	for i := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = store.Migrate(ctx, url)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "runner %d", i)
	}
	_, versions := countTables(t, url)
	files, err := storeMigrationCount()
	require.NoError(t, err)
	require.Equal(t, files, versions, "each migration applied exactly once")
}
