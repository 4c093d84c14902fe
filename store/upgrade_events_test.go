package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// eventRows are token events as migration 18 left them, with their
// transactions' statuses, outcomes and blocks: some executed in a
// committed block (timed), some whose block is not committed yet (NULL
// time), in two transactions of one block.
const eventRows = `
CREATE TABLE blocks_h0 PARTITION OF blocks FOR VALUES FROM (0) TO (100);
CREATE TABLE transaction_statuses_h0 PARTITION OF transaction_statuses FOR VALUES FROM (0) TO (100);
CREATE TABLE execution_outcomes_h0 PARTITION OF execution_outcomes FOR VALUES FROM (0) TO (100);
CREATE TABLE ft_events_ids_h000000000000 PARTITION OF ft_events_ids FOR VALUES FROM (0) TO (100);
CREATE TABLE nft_events_ids_h000000000000 PARTITION OF nft_events_ids FOR VALUES FROM (0) TO (100);
CREATE TABLE mt_events_ids_h000000000000 PARTITION OF mt_events_ids FOR VALUES FROM (0) TO (100);
INSERT INTO blocks (height, hash, prev_hash, epoch_id, author, timestamp_nanos, block_time, gas_price,
    total_supply, protocol_version, chunks_included, view)
VALUES (8, 'B8', 'B7', 'E', 'v.near', 1, '2025-01-01 00:00:08+00', 1, 1, 80, 1, '{}'),
       (9, 'B9', 'B8', 'E', 'v.near', 2, '2025-01-01 00:00:09+00', 1, 1, 80, 1, '{}');
INSERT INTO transaction_statuses (tx_hash, signer_id, block_height, final_execution_status, index_in_block)
VALUES ('T1', 'a.near', 8, 'FINAL', 0), ('T2', 'c.near', 8, 'FINAL', 1);
INSERT INTO execution_outcomes (id, block_height, executor_id, gas_burnt, tokens_burnt, tx_block_height, failure,
    tx_index, outcome_index)
VALUES ('T1', 8, 'a.near', 1, 1, 8, NULL, 0, 0), ('R2', 9, 'ft.near', 1, 1, 8, NULL, 0, 1),
       ('R3', 9, 'nft.near', 1, 1, 8, NULL, 0, 2), ('T2', 8, 'c.near', 1, 1, 8, NULL, 1, 0),
       ('R5', 10, 'ft.near', 1, 1, 8, NULL, 1, 1), ('R4', 10, 'mt.near', 1, 1, 8, NULL, 1, 2);
INSERT INTO accounts (name) VALUES ('a.near'), ('b.near'), ('c.near'), ('ft.near'), ('mt.near'), ('nft.near');
INSERT INTO ft_events_ids (tx_block_height, receipt_id, log_index, event_index, block_height, block_time, tx_hash,
    contract, version, event, item_index, account, other_account, delta_amount, memo)
VALUES (8, 'R2', 0, 0, 9, '2025-01-01 00:00:09+00', 'T1', 4, '1.0.0', 'ft_transfer', 0, 1, 2, -5, 'm'),
       (8, 'R2', 0, 1, 9, '2025-01-01 00:00:09+00', 'T1', 4, '1.0.0', 'ft_transfer', 0, 2, 1, 5, 'm'),
       (8, 'R5', 1, 0, 10, NULL, 'T2', 4, '1.0.1', 'ft_mint', 0, 3, NULL, 7, NULL);
INSERT INTO nft_events_ids (tx_block_height, receipt_id, log_index, event_index, block_height, block_time, tx_hash,
    contract, version, event, item_index, token_index, token_id, account, other_account, delta_amount,
    authorized_id, memo)
VALUES (8, 'R3', 0, 0, 9, '2025-01-01 00:00:09+00', 'T1', 6, '1.0.0', 'nft_mint', 0, 0, 't1', 3, NULL, 1, NULL, NULL);
INSERT INTO mt_events_ids (tx_block_height, receipt_id, log_index, event_index, block_height, block_time, tx_hash,
    contract, version, event, item_index, token_index, token_id, account, other_account, delta_amount,
    authorized_id, memo)
VALUES (8, 'R4', 0, 0, 10, NULL, 'T2', 5, '1.0.0', 'mt_burn', 0, 0, 't2', 3, NULL, -3, 'd.near', NULL);
`

// eventRowsRead reads every row and column of the event views.
const eventRowsRead = `
SELECT 'ft_events ' || row(e.*)::text FROM ft_events e
UNION ALL SELECT 'nft_events ' || row(e.*)::text FROM nft_events e
UNION ALL SELECT 'mt_events ' || row(e.*)::text FROM mt_events e
ORDER BY 1`

// TestEventRowsNameTheirPlacesAndBack: migration 19 drops the token
// events' block_time, tx_hash and receipt_id (the views read blocks,
// transaction_statuses and execution_outcomes for them) and their untimed
// indexes, keys the rows by their outcome's place, and makes event an
// enum; the views read every row and column as before, a NULL
// time while the executing block is not stored included; the down
// migration puts the columns and indexes back.
func TestEventRowsNameTheirPlacesAndBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	columns := `SELECT attname::text || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = 'ft_events_ids'::regclass AND attnum > 0 AND NOT attisdropped
		  AND attname IN ('block_time', 'tx_hash', 'tx_index', 'event', 'receipt_id', 'outcome_index') ORDER BY attname`
	keyColumns := `SELECT conname::text || ' ' || substr(pg_get_constraintdef(oid), 13) FROM pg_constraint
		WHERE conrelid = 'ft_events_ids'::regclass AND contype = 'p'`
	untimed := `SELECT indexrelid::regclass::text FROM pg_index
		WHERE indexrelid::regclass::text LIKE '%untimed%' ORDER BY 1`
	pool := roundTrip(t, 19, eventRows, eventRowsRead, 5, func(pool *pgxpool.Pool) {
		require.Equal(t, []string{"event token_event", "outcome_index integer", "tx_index integer"}, rowList(t, pool, columns))
		require.Equal(t, []string{"ft_events_pkey (tx_block_height, tx_index, outcome_index, log_index, event_index)"},
			rowList(t, pool, keyColumns))
		require.Empty(t, rowList(t, pool, untimed))
		var timed, unknown int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(block_time), count(*) FILTER (WHERE block_time IS NULL)
			FROM ft_events`).Scan(&timed, &unknown))
		require.Equal(t, []int{2, 1}, []int{timed, unknown}, "block 10 is not stored: no time, as before")
	})
	require.Equal(t, []string{"block_time timestamp with time zone", "event text", "receipt_id text", "tx_hash text"},
		rowList(t, pool, columns))
	require.Equal(t, []string{"ft_events_pkey (tx_block_height, receipt_id, log_index, event_index)"},
		rowList(t, pool, keyColumns))
	require.Equal(t, []string{"ft_events_untimed_idx", "mt_events_untimed_idx", "nft_events_untimed_idx"},
		rowList(t, pool, untimed))
}
