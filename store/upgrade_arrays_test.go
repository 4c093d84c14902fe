package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
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

// querier is a pool or one of its connections.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// rowList returns the text of each row of query, a single text column.
func rowList(t *testing.T, db querier, query string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), query, args...)
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
// its down migration restores the rows in partitions of their own; a
// change without its block_changes row makes the migration refuse.
func TestStateChangesBecomeArraysAndBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := roundTrip(t, 13, stateChangeRows, stateChangesInOrder, 4, func(pool *pgxpool.Pool) {
		var kind string
		require.NoError(t, pool.QueryRow(ctx, `SELECT relkind::text FROM pg_class WHERE relname = 'state_changes'`).Scan(&kind))
		require.Equal(t, "v", kind, "state_changes is a view")
	})
	var parts int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'state_changes'::regclass`).Scan(&parts))
	require.Equal(t, 2, parts)

	requireRefusal(t, 13, stateChangeRows+`DELETE FROM block_changes WHERE block_height = 150;`, stateChangesInOrder, 4,
		"state changes without their block_changes row")
}

// roundTrip writes rows into an archive at version-1, migrates it to
// version and back, and requires query (n rows) to read the same before,
// between (after check, if any) and after; it returns the archive.
func roundTrip(t *testing.T, version int64, rows, query string, n int, check func(*pgxpool.Pool)) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool := emptyArchiveAt(t, version-1)
	_, err := pool.Exec(ctx, rows)
	require.NoError(t, err)
	want := rowList(t, pool, query)
	require.Len(t, want, n)
	require.NoError(t, store.MigrateTo(ctx, pool, nil, version))
	require.Equal(t, want, rowList(t, pool, query), "read through the view")
	if check != nil {
		check(pool)
	}
	migrateDownTo(t, pool, version-1)
	require.Equal(t, want, rowList(t, pool, query), "after the down migration")
	return pool
}

// migrateDownTo applies the embedded down migrations to version.
func migrateDownTo(t *testing.T, pool *pgxpool.Pool, version int64) {
	t.Helper()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	provider, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = provider.DownTo(context.Background(), version)
	require.NoError(t, err)
}

// actionRows are a layout-3 archive's actions as migration 13 left them:
// two chunks of one block and one of another partition, with a Delegate,
// its nested action, typed and NULL columns, and a chunk without actions.
const actionRows = `
CREATE TABLE chunks_h0 PARTITION OF chunks FOR VALUES FROM (0) TO (100);
CREATE TABLE chunks_h100 PARTITION OF chunks FOR VALUES FROM (100) TO (200);
CREATE TABLE actions_h0 PARTITION OF actions FOR VALUES FROM (0) TO (100);
CREATE TABLE actions_h100 PARTITION OF actions FOR VALUES FROM (100) TO (200);
INSERT INTO chunks (chunk_hash, block_height, shard_id, author, height_created, gas_used, gas_limit,
    balance_burnt, tx_count, receipt_count, doc)
VALUES ('C8', 8, 3, 'v.near', 8, 0, 1, 0, 1, 1, '\x005b5d'), ('C9', 8, 4, 'v.near', 8, 0, 1, 0, 0, 0, '\x005b5d'),
       ('C150', 150, 0, 'v.near', 150, 0, 1, 0, 1, 0, '\x005b5d');
INSERT INTO actions (shard_id, parent_kind, parent_index, action_index, block_height, kind, method_name, gas, deposit,
    public_key, beneficiary_id, code_hash, detail, delegate_parent_index, delegated_by, delegate_sender_id)
VALUES (3, 'transaction', 0, 0, 8, 'Delegate', NULL, NULL, NULL, 'ed25519:U', NULL, NULL, NULL, NULL, 'relayer.near', 'user.near'),
       (3, 'transaction', 0, 1, 8, 'FunctionCall', 'go', 30000000000000, 1000000000000000000000000, NULL, NULL, NULL,
        NULL, 0, 'relayer.near', 'user.near'),
       (3, 'receipt', 2, 0, 8, 'AddKey', NULL, NULL, NULL, 'ed25519:K', NULL, NULL, '{"AddKey":{"x":1}}', NULL, NULL, NULL),
       (0, 'transaction', 0, 0, 150, 'DeleteAccount', NULL, NULL, NULL, NULL, 'b.near', NULL, NULL, NULL, NULL, NULL);
`

const actionsInOrder = `SELECT concat_ws(':', block_height, shard_id, parent_kind, parent_index, action_index, kind,
	coalesce(method_name, '-'), coalesce(gas::text, '-'), coalesce(deposit::text, '-'), coalesce(public_key, '-'),
	coalesce(beneficiary_id, '-'), coalesce(code_hash, '-'), coalesce(detail::text, '-'),
	coalesce(delegate_parent_index::text, '-'), coalesce(delegated_by, '-'), coalesce(delegate_sender_id, '-'))
	FROM actions ORDER BY 1`

// TestActionsBecomeArraysAndBack: migration 14 moves each chunk's actions
// into its chunks row's arrays, and the view actions reads them back
// exactly (NULLs, numerics, details); its down migration restores the rows;
// an action without its chunks row makes the migration refuse, not drop it.
func TestActionsBecomeArraysAndBack(t *testing.T) {
	t.Parallel()
	roundTrip(t, 14, actionRows, actionsInOrder, 4, nil)

	requireRefusal(t, 14, actionRows+`DELETE FROM chunks WHERE chunk_hash = 'C150';`, actionsInOrder, 4,
		"actions without their chunks row")
}

// requireRefusal writes rows into an archive at version-1 and requires the
// migration to version to fail with msg, leaving query's n rows in place.
func requireRefusal(t *testing.T, version int64, rows, query string, n int, msg string) {
	t.Helper()
	ctx := context.Background()
	pool := emptyArchiveAt(t, version-1)
	_, err := pool.Exec(ctx, rows)
	require.NoError(t, err)
	require.ErrorContains(t, store.MigrateTo(ctx, pool, nil, version), msg)
	require.Len(t, rowList(t, pool, query), n, "nothing was dropped")
}

// emptyArchiveAt returns a pool on a new database migrated to version.
func emptyArchiveAt(t *testing.T, version int64) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, storetest.NewEmptyDatabaseURL(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, store.MigrateTo(ctx, pool, nil, version))
	return pool
}

// activityRows are account_activity rows as migration 14 left them: a
// transaction's (signer and receiver) and a receipt's naming their hash,
// a token event's and a balance's.
const activityRows = `
CREATE TABLE transactions_h0 PARTITION OF transactions FOR VALUES FROM (0) TO (100);
CREATE TABLE receipts_h0 PARTITION OF receipts FOR VALUES FROM (0) TO (100);
INSERT INTO transactions (index_in_chunk, hash, block_height, shard_id, signer_id, public_key, nonce, receiver_id,
    priority_fee, action_count)
VALUES (1, 'T1', 8, 3, 'a.near', 'ed25519:K', 1, 'b.near', 0, 1);
INSERT INTO receipts (index_in_chunk, receipt_id, block_height, shard_id, predecessor_id, receiver_id, kind, signer_id)
VALUES (2, 'R2', 8, 4, 'a.near', 'b.near', 'Action', 'a.near');
INSERT INTO account_activity (account_id, block_height, kind, ref_id, position, source_height, other_account_id,
    contract_id, amount)
VALUES ('a.near', 8, 'tx_signer', 'T1', (3::bigint << 32) + 1, 8, 'b.near', NULL, NULL),
       ('b.near', 8, 'tx_receiver', 'T1', (3::bigint << 32) + 1, 8, 'a.near', NULL, NULL),
       ('b.near', 8, 'receipt', 'R2', (4::bigint << 32) + 2, 8, 'a.near', NULL, NULL),
       ('b.near', 9, 'ft', 'R2', 1, 8, 'a.near', 'ft.near', 5),
       ('b.near', 9, 'balance', '', 0, 9, NULL, NULL, 7);
`

// activityWithHashes is the documented page query's join: each row with
// its transaction hash or receipt id, by place.
const activityWithHashes = `SELECT concat_ws(':', a.account_id, a.block_height, a.kind, a.position,
	coalesce(nullif(a.ref_id, ''), t.hash, r.receipt_id, '-'))
FROM account_activity a
LEFT JOIN transactions t ON a.kind IN ('tx_signer', 'tx_receiver') AND t.block_height = a.block_height
     AND t.shard_id = (a.position >> 32)::int AND t.index_in_chunk = (a.position & 4294967295)::int
LEFT JOIN receipts r ON a.kind = 'receipt' AND r.block_height = a.block_height
     AND r.shard_id = (a.position >> 32)::int AND r.index_in_chunk = (a.position & 4294967295)::int
ORDER BY 1`

// TestActivityRefsBecomePlacesAndBack: migration 15 empties the ref_id of
// transaction and receipt activity rows, whose hash the documented join
// finds by place, keeps the token events' receipt ids, and its down
// migration writes the hashes back.
func TestActivityRefsBecomePlacesAndBack(t *testing.T) {
	t.Parallel()
	roundTrip(t, 15, activityRows, activityWithHashes, 5, func(pool *pgxpool.Pool) {
		require.Equal(t, []string{"", "", "", "", "R2"},
			rowList(t, pool, `SELECT ref_id FROM account_activity ORDER BY ref_id`), "only the event keeps its receipt id")
	})
}

// indexesOf lists the definitions of the indexes of the tables migration
// 16 changes.
const indexesOf = `SELECT indexdef FROM pg_indexes WHERE tablename IN ('receipts', 'transactions', 'execution_outcomes')
	ORDER BY indexname`

// TestIndexesNarrowAndBack: migration 16 indexes receipt and transaction
// hashes by hash and drops the outcomes' BRIN; the rows read the same, a
// receipt and a transaction are still found by their hash through an
// index (in a prepared statement's generic plan too), and the down
// migration restores every index as it was.
func TestIndexesNarrowAndBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	before := rowList(t, emptyArchiveAt(t, 15), indexesOf)
	pool := roundTrip(t, 16, activityRows, activityWithHashes, 5, func(pool *pgxpool.Pool) {
		after := strings.Join(rowList(t, pool, indexesOf), "\n")
		require.Contains(t, after, "receipts_receipt_id_idx ON ONLY public.receipts USING hash (receipt_id)")
		require.Contains(t, after, "transactions_hash_idx ON ONLY public.transactions USING hash (hash)")
		require.NotContains(t, after, "execution_outcomes_block_height_idx")
		conn, err := pool.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off")
		require.NoError(t, err)
		for _, c := range []struct{ query, hash, want string }{
			{`SELECT block_height || ':' || shard_id FROM receipts WHERE receipt_id = $1`, "R2", "8:4"},
			{`SELECT block_height || ':' || shard_id FROM transactions WHERE hash = $1`, "T1", "8:3"},
		} {
			require.Equal(t, []string{c.want}, rowList(t, conn, c.query, c.hash), c.query)
			plan := strings.Join(rowList(t, conn, "EXPLAIN "+c.query, c.hash), "\n")
			require.Contains(t, plan, "_idx", "found through the hash index: %s", plan)
		}
	})
	require.Equal(t, before, rowList(t, pool, indexesOf), "the down migration restores the indexes")
}
