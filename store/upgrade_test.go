package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// layout1 is an archive as migration 5 left it: per-row JSON in
// state_changes, transaction_statuses and execution_outcomes, chunk-hash
// keys. Two blocks, so that documents must not mix them up.
const layout1 = `
INSERT INTO blocks (height, hash, prev_hash, epoch_id, author, timestamp_nanos, block_time, gas_price,
    total_supply, protocol_version, chunks_included, view)
VALUES (7, 'B7', 'B6', 'E', 'v.near', 1, now(), 1, 1, 73, 1, '{"b":7}'),
       (8, 'B8', 'B7', 'E', 'v.near', 2, now(), 1, 1, 73, 1, '{"b":8}');
INSERT INTO chunks (chunk_hash, block_height, shard_id, author, height_created, gas_used, gas_limit,
    balance_burnt, tx_count, receipt_count, view)
VALUES ('C8', 8, 3, 'v.near', 8, 0, 1, 0, 1, 1, '{}');
INSERT INTO transactions (chunk_hash, index_in_chunk, hash, block_height, shard_id, signer_id, public_key,
    nonce, receiver_id, priority_fee, action_count)
VALUES ('C8', 0, 'T1', 8, 3, 'alice.near', 'ed25519:K', 1, 'bob.near', 0, 1);
INSERT INTO receipts (chunk_hash, index_in_chunk, receipt_id, block_height, shard_id, predecessor_id,
    receiver_id, kind, signer_id)
VALUES ('C8', 0, 'R1', 8, 3, 'alice.near', 'bob.near', 'Action', 'alice.near');
INSERT INTO actions (chunk_hash, parent_kind, parent_index, action_index, block_height, tx_hash, receipt_id,
    kind, detail)
VALUES ('C8', 'transaction', 0, 0, 8, 'T1', NULL, 'Transfer', '{"Transfer":{"deposit":"1"}}'),
       ('C8', 'receipt', 0, 0, 8, NULL, 'R1', 'Transfer', '{"Transfer":{"deposit":"1"}}');
INSERT INTO state_changes (block_height, index_in_block, account_id, change_type, cause_type, view)
VALUES (7, 0, 'alice.near', 'account_update', 'transaction_processing', '{"seven": 0}'),
       (8, 0, 'bob.near', 'account_update', 'receipt_processing', '{"type":"account_update", "future":[1, 2]}'),
       (8, 1, 'alice.near', 'account_update', 'transaction_processing', '{"x":"alice"}'),
       (8, 2, 'bob.near', 'data_update', 'receipt_processing', '{"x":"bob data"}');
INSERT INTO transaction_statuses (tx_hash, signer_id, block_height, final_execution_status, view)
VALUES ('T1', 'alice.near', 8, 'EXECUTED', '{"final_execution_status":"EXECUTED","receipts_outcome":[]}'),
       ('T0', 'carol.near', 8, 'FINAL', '{"final_execution_status":"FINAL","t":0}'),
       ('T7', 'carol.near', 7, 'FINAL', '{"t":7}');
INSERT INTO execution_outcomes (id, block_hash, block_height, executor_id, gas_burnt, tokens_burnt, status,
    tx_hash, tx_block_height, view)
VALUES ('T1', 'B8', 8, 'alice.near', 1, 1, '{}', 'T1', 8, '{}');
`

// TestLayout1ArchiveUpgradesInPlace: migrating an archive written before the
// packed documents keeps every answer: its changes and statuses are read
// from the format-0 documents the migration writes, byte for byte, and a
// status can still be replaced.
func TestLayout1ArchiveUpgradesInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := upgradedArchive(t, 5, layout1)
	got, err := s.StateChangesJSON(ctx, 8, []string{"account_update"}, []string{"bob.near", "alice.near"})
	require.NoError(t, err)
	require.Equal(t, []string{`{"type":"account_update", "future":[1, 2]}`, `{"x":"alice"}`}, texts(got))
	got, err = s.StateChangesJSON(ctx, 7, []string{"account_update"}, []string{"alice.near"})
	require.NoError(t, err)
	require.Equal(t, []string{`{"seven": 0}`}, texts(got))

	for tx, want := range map[string]string{
		"T1": `{"final_execution_status":"EXECUTED","receipts_outcome":[]}`,
		"T0": `{"final_execution_status":"FINAL","t":0}`,
		"T7": `{"t":7}`,
	} {
		signer := "carol.near"
		if tx == "T1" {
			signer = "alice.near"
		}
		st, err := s.TxStatus(ctx, tx, signer, true)
		require.NoError(t, err)
		require.Equal(t, want, string(st), tx)
	}

	var shard int
	require.NoError(t, pool.QueryRow(ctx, `SELECT min(shard_id) FROM actions`).Scan(&shard))
	require.Equal(t, 3, shard, "actions take their chunk's shard")

	pending, err := s.PendingTxStatuses(ctx, 8, 10)
	require.NoError(t, err)
	require.Equal(t, []bundle.TxRef{{TxHash: "T1", SignerID: "alice.near", Height: 8}}, pending)
	final := `{"final_execution_status":"FINAL","receipts_outcome":[],"transaction_outcome":` +
		`{"proof":[],"block_hash":"B8","id":"T1","outcome":{"logs":[],"receipt_ids":[],"gas_burnt":2,` +
		`"tokens_burnt":"2","executor_id":"alice.near","status":{"SuccessValue":""}}}}`
	require.NoError(t, s.UpdateTxStatus(ctx, pending[0], bundle.TxStatus{TxHash: "T1", SignerID: "alice.near",
		JSON: json.RawMessage(final), BlockHeights: map[string]uint64{"B8": 8}}))
	st, err := s.TxStatus(ctx, "T1", "alice.near", true)
	require.NoError(t, err)
	require.Equal(t, final, string(st))
	st, err = s.TxStatus(ctx, "T0", "carol.near", true)
	require.NoError(t, err)
	require.Equal(t, `{"final_execution_status":"FINAL","t":0}`, string(st), "the block's other status is kept")
	pending, err = s.PendingTxStatuses(ctx, 8, 10)
	require.NoError(t, err)
	require.Empty(t, pending)
	var gas int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT gas_burnt FROM execution_outcomes WHERE id = 'T1'`).Scan(&gas))
	require.Equal(t, int64(2), gas, "the outcome row is replaced")
}

// upgradedArchive returns a store and a pool on an archive migrated to
// version, filled by sql, then migrated to the latest version.
func upgradedArchive(t *testing.T, version int64, sql string) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	url := storetest.NewEmptyDatabaseURL(t)
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, store.MigrateTo(ctx, pool, nil, version))
	_, err = pool.Exec(ctx, sql)
	require.NoError(t, err)
	require.NoError(t, store.Migrate(ctx, url))
	s, err := store.Open(ctx, url, store.Config{}, nil)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, pool
}

func texts(raws []json.RawMessage) []string {
	out := make([]string, len(raws))
	for i, r := range raws {
		out[i] = string(r)
	}
	return out
}
