package store_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// activityRefRows are account activity rows as migration 20 left them,
// with the outcomes their token rows name by receipt id: a transaction's,
// a receipt's and balance rows (ref_id empty), and token rows of two
// transactions of blocks 8 and 9 at the same index and outcome place,
// executed in block 10 for the same account (told apart by their delay),
// and others at later logs and events.
const activityRefRows = `
CREATE TABLE execution_outcomes_ids_h000000000000 PARTITION OF execution_outcomes_ids FOR VALUES FROM (0) TO (100);
INSERT INTO accounts (name) VALUES ('a.near'), ('b.near'), ('ft.near'), ('nft.near'), ('mt.near');
INSERT INTO execution_outcomes_ids (id, block_height, executor, gas_burnt, tokens_burnt, tx_block_height, failure,
    tx_index, outcome_index)
VALUES ('R2', 10, 3, 1, 1, 8, NULL, 0, 1), ('R3', 9, 4, 1, 1, 8, NULL, 0, 2), ('R4', 9, 5, 1, 1, 8, NULL, 1, 1),
       ('R5', 10, 3, 1, 1, 9, NULL, 0, 1);
INSERT INTO account_activity_ids (account, block_height, kind, ref_id, position, source_height, other_account, contract,
    amount)
VALUES (1, 8, 'tx_signer', '', 12884901892, 8, 2, NULL, NULL), (2, 8, 'tx_receiver', '', 12884901892, 8, 1, NULL, NULL),
       (2, 9, 'receipt', '', 1, 9, 1, NULL, NULL), (1, 8, 'balance', '', 0, 8, NULL, NULL, 100),
       (2, 9, 'balance', '', 0, 9, NULL, NULL, NULL),
       (1, 10, 'ft', 'R2', 0, 8, 2, 3, -5), (1, 10, 'ft', 'R5', 0, 9, 2, 3, -7), (2, 10, 'ft', 'R2', 1, 8, 1, 3, 5),
       (2, 9, 'nft', 'R3', 4294967299, 8, NULL, 4, 1), (2, 9, 'mt', 'R4', 8589934593, 8, 1, 5, -3);
`

// activityRefRowsRead reads every row and column of the view.
const activityRefRowsRead = `SELECT row(a.*)::text FROM account_activity a ORDER BY 1`

// TestActivityRowsNameTheirPlacesAndBack: migration 21 turns the
// activity's ref_id into an integer ref, a token row's transaction index,
// packs its delay and outcome, log and event places into position, and
// drops source_height; the view reads every row and column as before (the
// receipt id from the outcome's row, source_height from the delay); the
// down migration puts the receipt ids and source_height back.
func TestActivityRowsNameTheirPlacesAndBack(t *testing.T) {
	t.Parallel()
	columns := `SELECT attname::text || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = 'account_activity_ids'::regclass AND attnum > 0 AND NOT attisdropped
		  AND attname IN ('ref', 'ref_id', 'position', 'source_height') ORDER BY attname`
	keyColumns := `SELECT substr(pg_get_constraintdef(oid), 13) FROM pg_constraint
		WHERE conrelid = 'account_activity_ids'::regclass AND contype = 'p'`
	pool := roundTrip(t, 21, activityRefRows, activityRefRowsRead, 10, func(pool *pgxpool.Pool) {
		require.Equal(t, []string{"position bigint", "ref integer"}, rowList(t, pool, columns))
		require.Equal(t, []string{"(account, block_height, kind, ref, \"position\")"}, rowList(t, pool, keyColumns))
		require.Equal(t, []string{
			"1 10 ft 0 1099528404992", // block 9's transaction, 1 block late, outcome 1
			"1 10 ft 0 2199040032768", // block 8's, 2 blocks late
			"2 10 ft 0 2199040032769", // the transfer's second row
			"2 9 mt 1 1099528536065",  // outcome 1 of transaction 1, log 2, event 1
			"2 9 nft 0 1099545247747", // outcome 2, log 1, event 3
		}, rowList(t, pool, `SELECT concat_ws(' ', account, block_height, kind, ref, position) FROM account_activity_ids
			WHERE kind IN ('ft', 'nft', 'mt') ORDER BY account, block_height DESC, kind::text, position`))
	})
	require.Equal(t, []string{"position bigint", "ref_id text", "source_height bigint"}, rowList(t, pool, columns))
	require.Equal(t, []string{"(account, block_height, kind, ref_id, \"position\")"}, rowList(t, pool, keyColumns))
}
