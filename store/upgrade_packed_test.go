package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store/storetest"
)

// layout2Chunk is a chunk view as a layout-2 archive kept it (json keeps
// the text as written: spacing and member order are part of the answer).
const layout2Chunk = `{"author":"v.near","header":{"chunk_hash":"C8","shard_id":3,"height_included":8,` +
	`"congestion_info":{"delayed_receipts_gas":"7","buffered_receipts_gas":"0","receipt_bytes":11,"allowed_shard":3}},` +
	`"transactions":[],"receipts":[{"receipt_id":"R0", "x":1},{"receipt_id":"R1","receipt":{"Action":{"actions":[]}} ,"future":[1, 2]}]}`

// layout2 is an archive as migration 10 left it: chunk views as json,
// chunk-hash columns, a Delegate's detail, call arguments, block_effects
// rows (block 9's without a changes document).
const layout2 = `
CREATE TABLE blocks_h0 PARTITION OF blocks FOR VALUES FROM (0) TO (100);
CREATE TABLE chunks_h0 PARTITION OF chunks FOR VALUES FROM (0) TO (100);
CREATE TABLE receipts_h0 PARTITION OF receipts FOR VALUES FROM (0) TO (100);
CREATE TABLE transactions_h0 PARTITION OF transactions FOR VALUES FROM (0) TO (100);
CREATE TABLE actions_h0 PARTITION OF actions FOR VALUES FROM (0) TO (100);
CREATE TABLE state_changes_h0 PARTITION OF state_changes FOR VALUES FROM (0) TO (100);
CREATE TABLE block_effects_h0 PARTITION OF block_effects FOR VALUES FROM (0) TO (100);
CREATE TABLE block_changes_h0 PARTITION OF block_changes FOR VALUES FROM (0) TO (100);
INSERT INTO blocks (height, hash, prev_hash, epoch_id, author, timestamp_nanos, block_time, gas_price,
    total_supply, protocol_version, chunks_included, view)
VALUES (7, 'B7', 'B6', 'E', 'v.near', 1, now(), 1, 1, 77, 1, '{"b":7}'),
       (8, 'B8', 'B7', 'E', 'v.near', 2, now(), 1, 1, 77, 1, '{"b":8}'),
       (9, 'B9', 'B8', 'E', 'v.near', 3, now(), 1, 1, 77, 1, '{"b":9}');
INSERT INTO chunks (chunk_hash, block_height, shard_id, author, height_created, gas_used, gas_limit,
    balance_burnt, tx_count, receipt_count, view)
VALUES ('C8', 8, 3, 'v.near', 8, 0, 1, 0, 0, 2, '` + layout2Chunk + `');
INSERT INTO transactions (chunk_hash, index_in_chunk, hash, block_height, shard_id, signer_id, public_key,
    nonce, receiver_id, priority_fee, action_count)
VALUES ('C8', 0, 'T1', 8, 3, 'relayer.near', 'ed25519:R', 1, 'user.near', 0, 1);
INSERT INTO receipts (chunk_hash, index_in_chunk, receipt_id, block_height, shard_id, predecessor_id,
    receiver_id, kind, signer_id)
VALUES ('C8', 0, 'R0', 8, 3, 'a.near', 'b.near', 'Action', 'a.near'),
       ('C8', 1, 'R1', 8, 3, 'a.near', 'b.near', 'Action', 'a.near');
INSERT INTO actions (chunk_hash, shard_id, parent_kind, parent_index, action_index, block_height, tx_hash,
    receipt_id, kind, method_name, args, detail, delegated_by, delegate_sender_id, delegate_parent_index)
VALUES ('C8', 3, 'transaction', 0, 0, 8, 'T1', NULL, 'Delegate', NULL, NULL, '{"Delegate":{"delegate_action":{}}}',
        'relayer.near', 'user.near', NULL),
       ('C8', 3, 'transaction', 0, 1, 8, 'T1', NULL, 'FunctionCall', 'go', '\x7b7d', NULL,
        'relayer.near', 'user.near', 0),
       ('C8', 3, 'transaction', 0, 2, 8, 'T1', NULL, 'FutureAction', NULL, NULL, '{"FutureAction":{}}',
        NULL, NULL, NULL);
INSERT INTO state_changes (block_height, index_in_block, account_id, change_type, cause_type, cause_tx_hash,
    cause_receipt_hash, public_key, data_key)
VALUES (8, 0, 'b.near', 'data_update', 'receipt_processing', NULL, 'R0', NULL, '\x6b'),
       (8, 1, 'b.near', 'gas_key_nonce_update', 'future_cause', NULL, NULL, NULL, NULL);
INSERT INTO block_changes (block_height, changes) VALUES (8, '\x005b7b2278223a317d5d');
INSERT INTO block_effects (block_height, index_in_block, account_id, effect_type)
VALUES (8, 0, 'b.near', 'data_touched'), (8, 1, 'a.near', 'account_touched'),
       (9, 0, 'c.near', 'account_touched');
`

// TestLayout2ArchiveUpgradesInPlace: migrating a layout-2 archive to layout
// 3 keeps every answer that reads what moved: the chunk (byte for byte),
// a receipt out of it, its congestion info, each block's effects (none
// for a block without); the rows lose their copies, and kinds stored as
// text become labels of their enum types, unknown ones included.
func TestLayout2ArchiveUpgradesInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := upgradedArchive(t, 10, layout2)
	view, err := s.ChunkView(ctx, "C8")
	require.NoError(t, err)
	require.Equal(t, layout2Chunk, string(view))
	receipt, err := s.Receipt(ctx, "R1")
	require.NoError(t, err)
	require.Equal(t, `{"receipt_id":"R1","receipt":{"Action":{"actions":[]}} ,"future":[1, 2]}`, string(receipt))
	info, included, err := s.ChunkCongestion(ctx, "C8")
	require.NoError(t, err)
	require.Equal(t, uint64(8), included)
	require.Equal(t, uint64(11), info.ReceiptBytes)

	effects, err := s.BlockEffects(ctx, 8)
	require.NoError(t, err)
	require.Equal(t, []near.StateChangeKindView{{Type: "data_touched", AccountID: "b.near"},
		{Type: "account_touched", AccountID: "a.near"}}, effects)
	effects, err = s.BlockEffects(ctx, 9)
	require.NoError(t, err)
	require.Equal(t, []near.StateChangeKindView{{Type: "account_touched", AccountID: "c.near"}}, effects)
	effects, err = s.BlockEffects(ctx, 7)
	require.NoError(t, err)
	require.Empty(t, effects)
	require.NotNil(t, effects, "no effects is an empty list")
	changes, err := s.StateChangesJSON(ctx, 8, []string{"data_update"}, []string{"b.near"})
	require.NoError(t, err)
	require.Equal(t, []string{`{"x":1}`}, texts(changes))

	var delegateDetail *string
	var method string
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT detail::text FROM actions WHERE kind = 'Delegate'),
		(SELECT method_name FROM actions WHERE kind = 'FunctionCall')`).Scan(&delegateDetail, &method))
	require.Nil(t, delegateDetail, "a Delegate's members are in its chunk")
	require.Equal(t, "go", method)
	var gone int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns
		WHERE (table_name, column_name) IN (('chunks', 'view'), ('receipts', 'chunk_hash'), ('transactions', 'chunk_hash'),
			('actions', 'args'), ('actions', 'tx_hash'), ('state_changes', 'cause_tx_hash'))
		   OR table_name = 'block_effects'`).Scan(&gone))
	require.Zero(t, gone, "the copies are gone")

	// Kinds and causes Nearline does not know, stored before, are labels of
	// their types.
	var future, gasKey int
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM actions WHERE kind = 'FutureAction'),
		(SELECT count(*) FROM state_changes WHERE change_type = 'gas_key_nonce_update' AND cause_type = 'future_cause')`).
		Scan(&future, &gasKey))
	require.Equal(t, 1, future)
	require.Equal(t, 1, gasKey)
}

// TestPackedDocumentsAreNotCompressedAgain: the columns holding packed
// (zstd) documents are stored without TOAST compression in every
// partition, those the store creates as it writes included, and a
// chunk's document holds its view as served.
func TestPackedDocumentsAreNotCompressedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 2*storetest.PartitionSize + 5})
	rows, err := s.Pool().Query(ctx, `SELECT c.relname || '.' || a.attname, a.attstorage::text
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		WHERE (c.relname LIKE 'chunks%' AND a.attname = 'doc')
		   OR (c.relname LIKE 'block_changes%' AND a.attname IN ('changes', 'effects'))
		   OR (c.relname LIKE 'block_tx_statuses%' AND a.attname = 'statuses')`)
	require.NoError(t, err)
	storage := map[string]string{}
	for rows.Next() {
		var col, st string
		require.NoError(t, rows.Scan(&col, &st))
		storage[col] = st
	}
	require.NoError(t, rows.Err())
	require.GreaterOrEqual(t, len(storage), 4*4, "the parents and at least three partitions each")
	for col, st := range storage {
		require.Equal(t, "e", st, "%s is stored EXTERNAL", col)
	}

	b, ok := c.Bundle(3)
	require.True(t, ok)
	view, err := s.ChunkView(ctx, b.Chunks[0].View.Header.ChunkHash)
	require.NoError(t, err)
	require.Equal(t, string(b.Chunks[0].JSON), string(view))
	var format byte
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT get_byte(doc, 0) FROM chunks WHERE chunk_hash = $1`,
		b.Chunks[0].View.Header.ChunkHash).Scan(&format))
	require.Equal(t, byte(1), format, "a zstd document")
}
