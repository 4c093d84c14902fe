package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// namedRows are rows of every table migration 18 interns, as layout 3
// left them: state history, activity (a transaction's, a token event's
// with its contract, a balance), and token events in a partition.
const namedRows = `
INSERT INTO account_history (account_id, block_height, deleted, amount, locked, code_hash, storage_usage,
    storage_paid_at, extra, global_contract_hash, global_contract_account_id)
VALUES ('a.near', 8, false, 10, 0, '11111111111111111111111111111111', 100, 0, NULL, NULL, 'code.near'),
       ('b.near', 9, true, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO access_key_history (account_id, public_key, block_height, deleted, nonce, permission, extra)
VALUES ('a.near', 'ed25519:K', 8, false, 7, '"FullAccess"', NULL);
INSERT INTO contract_data_history (account_id, data_key, block_height, deleted, value)
VALUES ('ft.near', '\x6b31', 8, false, '\x76'), ('ft.near', '\x6b32', 9, true, NULL);
INSERT INTO contract_code_history (account_id, block_height, deleted, code_hash)
VALUES ('ft.near', 8, false, 'H1');
CREATE TABLE ft_events_h000000000000 PARTITION OF ft_events FOR VALUES FROM (0) TO (100);
CREATE TABLE nft_events_h000000000000 PARTITION OF nft_events FOR VALUES FROM (0) TO (100);
CREATE TABLE mt_events_h000000000000 PARTITION OF mt_events FOR VALUES FROM (0) TO (100);
INSERT INTO ft_events (tx_block_height, receipt_id, log_index, event_index, block_height, block_time, tx_hash,
    contract_id, standard, version, event, item_index, account_id, other_account_id, delta_amount, memo)
VALUES (8, 'R2', 0, 0, 9, NULL, 'T1', 'ft.near', 'nep141', '1.0.0', 'ft_transfer', 0, 'a.near', 'b.near', -5, 'm'),
       (8, 'R2', 0, 1, 9, NULL, 'T1', 'ft.near', 'nep141', '1.0.0', 'ft_transfer', 0, 'b.near', 'a.near', 5, 'm');
INSERT INTO nft_events (tx_block_height, receipt_id, log_index, event_index, block_height, block_time, tx_hash,
    contract_id, standard, version, event, item_index, token_index, token_id, account_id, other_account_id,
    delta_amount, authorized_id, memo)
VALUES (8, 'R3', 0, 0, 9, NULL, 'T1', 'nft.near', 'nep171', '1.0.0', 'nft_mint', 0, 0, 't1', 'c.near', NULL, 1, NULL, NULL);
INSERT INTO mt_events (tx_block_height, receipt_id, log_index, event_index, block_height, block_time, tx_hash,
    contract_id, standard, version, event, item_index, token_index, token_id, account_id, other_account_id,
    delta_amount, authorized_id, memo)
VALUES (8, 'R4', 0, 0, 9, NULL, 'T1', 'mt.near', 'nep245', '1.0.0', 'mt_burn', 0, 0, 't2', 'c.near', NULL, -3, 'd.near', NULL);
INSERT INTO account_activity (account_id, block_height, kind, ref_id, position, source_height, other_account_id,
    contract_id, amount)
VALUES ('a.near', 8, 'tx_signer', '', (3::bigint << 32) + 1, 8, 'b.near', NULL, NULL),
       ('b.near', 9, 'ft', 'R2', 1, 8, 'a.near', 'ft.near', 5),
       ('b.near', 9, 'balance', '', 0, 9, NULL, NULL, NULL);
`

// namedRowsRead reads every row of namedRows, every column, by the tables'
// layout-3 names.
const namedRowsRead = `
SELECT 'account_history ' || row(h.*)::text FROM account_history h
UNION ALL SELECT 'access_key_history ' || row(h.*)::text FROM access_key_history h
UNION ALL SELECT 'contract_data_history ' || row(h.*)::text FROM contract_data_history h
UNION ALL SELECT 'contract_code_history ' || row(h.*)::text FROM contract_code_history h
UNION ALL SELECT 'account_activity ' || row(a.*)::text FROM account_activity a
UNION ALL SELECT 'ft_events ' || row(e.tx_block_height, e.receipt_id, e.log_index, e.event_index, e.block_height,
    e.block_time, e.tx_hash, e.contract_id, e.standard, e.version, e.event, e.item_index, e.account_id,
    e.other_account_id, e.delta_amount, e.memo)::text FROM ft_events e
UNION ALL SELECT 'nft_events ' || row(e.tx_block_height, e.receipt_id, e.contract_id, e.standard, e.token_id,
    e.account_id, e.other_account_id, e.delta_amount, e.authorized_id)::text FROM nft_events e
UNION ALL SELECT 'mt_events ' || row(e.tx_block_height, e.receipt_id, e.contract_id, e.standard, e.token_id,
    e.account_id, e.other_account_id, e.delta_amount, e.authorized_id)::text FROM mt_events e
ORDER BY 1`

// TestAccountIDsAreInternedAndBack: migration 18 numbers every account the
// history, activity and token event tables name, keeps their rows under
// <table>_ids with the numbers, and the views with the old names read
// every row and column as before; the partitions follow their table's
// name; the down migration restores the tables as they were.
func TestAccountIDsAreInternedAndBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	roundTrip(t, 18, namedRows, namedRowsRead, 13, func(pool *pgxpool.Pool) {
		require.Equal(t, []string{"a.near", "b.near", "c.near", "ft.near", "mt.near", "nft.near"},
			rowList(t, pool, `SELECT name FROM accounts ORDER BY id`), "numbered in name order; authorized_id stays a name")
		require.Equal(t, []string{"ft_events_ids_h000000000000"},
			rowList(t, pool, `SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
				WHERE i.inhparent = 'ft_events_ids'::regclass`))
		var kind string
		require.NoError(t, pool.QueryRow(ctx, `SELECT relkind::text FROM pg_class WHERE relname = 'account_activity'`).Scan(&kind))
		require.Equal(t, "v", kind, "account_activity is a view")
		var typ string
		require.NoError(t, pool.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
			WHERE attrelid = 'account_activity_ids'::regclass AND attname = 'account'`).Scan(&typ))
		require.Equal(t, "integer", typ)
	})
	pool := emptyArchiveAt(t, 18)
	migrateDownTo(t, pool, 17)
	require.Empty(t, rowList(t, pool, `SELECT relname::text FROM pg_class WHERE relname = 'accounts'`))
	require.Equal(t, "r", strings.Join(rowList(t, pool, `SELECT relkind::text FROM pg_class WHERE relname = 'account_history'`), ""))
}

// chainRows are transactions, receipts (one without a signer) and outcomes
// as migration 19 left them, in partitions, beside an account that
// migration 18 numbered.
const chainRows = `
INSERT INTO accounts (name) VALUES ('b.near');
CREATE TABLE transactions_h000000000000 PARTITION OF transactions FOR VALUES FROM (0) TO (100);
CREATE TABLE receipts_h000000000000 PARTITION OF receipts FOR VALUES FROM (0) TO (100);
CREATE TABLE execution_outcomes_h000000000000 PARTITION OF execution_outcomes FOR VALUES FROM (0) TO (100);
INSERT INTO transactions (index_in_chunk, hash, block_height, shard_id, signer_id, public_key, nonce, receiver_id,
    priority_fee, action_count)
VALUES (0, 'T1', 8, 3, 'a.near', 'ed25519:K', 7, 'b.near', 0, 1);
INSERT INTO receipts (index_in_chunk, receipt_id, block_height, shard_id, predecessor_id, receiver_id, kind, signer_id)
VALUES (0, 'R1', 9, 3, 'a.near', 'b.near', 'Action', 'a.near'),
       (1, 'R2', 9, 3, 'system', 'b.near', 'Data', NULL);
INSERT INTO execution_outcomes (id, block_height, executor_id, gas_burnt, tokens_burnt, tx_block_height, failure,
    tx_index, outcome_index)
VALUES ('T1', 8, 'a.near', 5, 6, 8, NULL, 0, 0), ('R1', 9, 'b.near', 5, 6, 8, '{"x":1}', 0, 1);
`

// chainRowsRead reads every row and column of chainRows by the tables'
// names before migration 20.
const chainRowsRead = `
SELECT 'transactions ' || row(t.*)::text FROM transactions t
UNION ALL SELECT 'receipts ' || row(r.*)::text FROM receipts r
UNION ALL SELECT 'execution_outcomes ' || row(o.*)::text FROM execution_outcomes o
ORDER BY 1`

// TestChainAccountIDsAreInternedAndBack: migration 20 numbers the accounts
// of transactions, receipts and outcomes (keeping the numbers accounts
// already has), keeps their rows under <table>_ids with the numbers and
// their partitions renamed with them; the views read every row and column
// as before, and the down migration restores the tables.
func TestChainAccountIDsAreInternedAndBack(t *testing.T) {
	t.Parallel()
	pool := roundTrip(t, 20, chainRows, chainRowsRead, 5, func(pool *pgxpool.Pool) {
		require.Equal(t, []string{"b.near", "a.near", "system"},
			rowList(t, pool, `SELECT name FROM accounts ORDER BY id`), "new names numbered after the old, in name order")
		for _, table := range []string{"transactions", "receipts", "execution_outcomes"} {
			require.Equal(t, []string{table + "_ids_h000000000000"}, attachedPartitions(t, pool, table+"_ids"))
		}
		require.Equal(t, []string{"integer"}, rowList(t, pool, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
			WHERE attrelid = 'receipts_ids'::regclass AND attname = 'predecessor'`))
	})
	require.Equal(t, []string{"receipts_h000000000000"}, attachedPartitions(t, pool, "receipts"))
}
