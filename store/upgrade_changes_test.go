package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/migrations"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// stateChangeRows is a layout-3 archive's state_changes as migration 12
// left them: two blocks in two partitions, a change without a cause
// receipt, and a block with effects only.
const stateChangeRows = `
CREATE TABLE state_changes_h0 PARTITION OF state_changes FOR VALUES FROM (0) TO (100);
CREATE TABLE state_changes_h100 PARTITION OF state_changes FOR VALUES FROM (100) TO (200);
CREATE TABLE block_changes_h0 PARTITION OF block_changes FOR VALUES FROM (0) TO (100);
CREATE TABLE block_changes_h100 PARTITION OF block_changes FOR VALUES FROM (100) TO (200);
INSERT INTO state_changes (block_height, index_in_block, account_id, change_type, cause_type, cause_receipt_hash)
VALUES (8, 0, 'b.near', 'data_update', 'receipt_processing', 'R0'),
       (8, 1, 'a.near', 'account_update', 'transaction_processing', NULL),
       (8, 2, 'b.near', 'account_update', 'receipt_processing', 'R0'),
       (150, 0, 'c.near', 'access_key_update', 'receipt_processing', 'R9');
INSERT INTO block_changes (block_height, changes, effects)
VALUES (8, '\x005b5d', '\x005b5d'), (9, '\x005b5d', '\x005b5d'), (150, '\x005b5d', '\x005b5d');
`

const stateChangesInOrder = `SELECT block_height || ':' || index_in_block || ':' || account_id || ':' || change_type
	|| ':' || cause_type || ':' || coalesce(cause_receipt_hash, '-') FROM state_changes ORDER BY 1`

func stateChangeList(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), stateChangesInOrder)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestStateChangesBecomeArraysAndBack: migration 13 moves each block's
// state_changes rows into its block_changes row's arrays, and the view
// state_changes reads them back exactly (places, kinds, missing causes);
// its down migration restores the rows in partitions of their own.
func TestStateChangesBecomeArraysAndBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewEmptyDatabaseURL(t)
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, store.MigrateTo(ctx, pool, nil, 12))
	_, err = pool.Exec(ctx, stateChangeRows)
	require.NoError(t, err)
	want := stateChangeList(t, pool)
	require.Len(t, want, 4)

	require.NoError(t, store.MigrateTo(ctx, pool, nil, 13))
	require.Equal(t, want, stateChangeList(t, pool))
	var kind string
	require.NoError(t, pool.QueryRow(ctx, `SELECT relkind::text FROM pg_class WHERE relname = 'state_changes'`).Scan(&kind))
	require.Equal(t, "v", kind, "state_changes is a view")

	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	provider, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = provider.DownTo(ctx, 12)
	require.NoError(t, err)
	require.Equal(t, want, stateChangeList(t, pool))
	var parts int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'state_changes'::regclass`).Scan(&parts))
	require.Equal(t, 2, parts)
}
