package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestActionDetailOnlyWhereTypedColumnsFallShort: a Transfer and a
// FunctionCall are their typed columns (detail NULL; the call's arguments
// are in the chunk's document, served by `chunk`); a deploy names its code
// by hash and the code is in contract_codes; an AddKey keeps its permission
// in detail, and an action Nearline does not model is kept as it came.
func TestActionDetailOnlyWhereTypedColumnsFallShort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	code := []byte("\x00asm deployed")
	var other near.ActionView
	require.NoError(t, json.Unmarshal([]byte(`{"FutureAction":{"sender_id":"a.near","future":1}}`), &other))
	s, c := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 1, Edit: func(b *bundle.Bundle) {
		b.Chunks[0].View.Transactions[0].Actions = []near.ActionView{
			{Transfer: &near.TransferAction{Deposit: near.U128From64(5)}},
			{FunctionCall: &near.FunctionCallAction{MethodName: "go", Args: []byte("{\"to\":1}"), Gas: 7, Deposit: near.U128From64(0)}},
			{DeployContract: &near.DeployContractAction{Code: code}},
			{AddKey: &near.AddKeyAction{PublicKey: "ed25519:K", AccessKey: near.AccessKeyView{Nonce: 0,
				Permission: near.AccessKeyPermission{}}}},
			other,
		}
		b.Chunks[0].JSON = nil
	}})
	b, ok := c.Bundle(1)
	require.True(t, ok)

	rows, err := s.Pool().Query(ctx, `SELECT kind, detail::text, code_hash, method_name, gas FROM actions
		WHERE parent_kind = 'transaction' AND shard_id = 0 ORDER BY action_index`)
	require.NoError(t, err)
	type action struct {
		Kind     string
		Detail   *string
		CodeHash *string
		Method   *string
		Gas      *int64
	}
	var got []action
	for rows.Next() {
		var a action
		require.NoError(t, rows.Scan(&a.Kind, &a.Detail, &a.CodeHash, &a.Method, &a.Gas))
		got = append(got, a)
	}
	require.NoError(t, rows.Err())
	require.Len(t, got, 5)
	require.Equal(t, "Transfer", got[0].Kind)
	require.Nil(t, got[0].Detail)
	require.Nil(t, got[1].Detail)
	require.Equal(t, "go", *got[1].Method)
	require.Equal(t, int64(7), *got[1].Gas)
	view, err := s.ChunkView(ctx, b.Chunks[0].View.Header.ChunkHash)
	require.NoError(t, err)
	var chunk near.ChunkView
	require.NoError(t, json.Unmarshal(view, &chunk))
	require.Equal(t, []byte(`{"to":1}`), []byte(chunk.Transactions[0].Actions[1].FunctionCall.Args), "the arguments, in the chunk")
	require.Nil(t, got[2].Detail)
	require.Equal(t, near.HashOf(code).String(), *got[2].CodeHash)
	var stored []byte
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT code FROM contract_codes WHERE code_hash = $1`, *got[2].CodeHash).Scan(&stored))
	require.Equal(t, code, stored)
	require.NotNil(t, got[3].Detail)
	require.JSONEq(t, `{"AddKey":{"public_key":"ed25519:K","access_key":{"nonce":0,"permission":"FullAccess"}}}`, *got[3].Detail)
	require.NotNil(t, got[4].Detail)
	require.JSONEq(t, `{"FutureAction":{"sender_id":"a.near","future":1}}`, *got[4].Detail)
}

// TestDelegatedActionsSayWhoPaidAndWhoActed: a relayer's transaction with
// one Delegate action, and the receipt relayer -> user carrying it, store
// the Delegate row (relayer, user, the user's key) and a row per nested
// action after it, naming its Delegate; other rows name no delegation.
func TestDelegatedActionsSayWhoPaidAndWhoActed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	delegate := near.ActionView{Delegate: &near.SignedDelegateAction{
		DelegateAction: near.DelegateAction{SenderID: "user.near", ReceiverID: "app.near", Nonce: 7, MaxBlockHeight: 100, PublicKey: "ed25519:U",
			Actions: []near.ActionView{
				{FunctionCall: &near.FunctionCallAction{MethodName: "play", Args: []byte(`{}`), Gas: 9, Deposit: near.U128From64(0)}},
				{Transfer: &near.TransferAction{Deposit: near.U128From64(3)}},
			}},
		Signature: "ed25519:S"}}
	var tx *near.SignedTransactionView
	s, _ := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 1, Edit: func(b *bundle.Bundle) {
		tx = &b.Chunks[0].View.Transactions[0]
		tx.SignerID, tx.ReceiverID, tx.Actions = "relayer.near", "user.near", []near.ActionView{delegate}
		rc := &b.Chunks[0].View.Receipts[0]
		rc.Receipt = near.ReceiptEnumView{Action: &near.ActionReceiptView{SignerID: "relayer.near", SignerPublicKey: "ed25519:R",
			OutputDataReceivers: []near.DataReceiverView{}, InputDataIDs: []string{}, Actions: []near.ActionView{delegate}}}
		b.Chunks[0].JSON = nil
	}})

	for _, parent := range []string{"transaction", "receipt"} {
		rows, err := s.Pool().Query(ctx, `SELECT action_index, kind, delegate_parent_index, delegated_by, delegate_sender_id, public_key, method_name
			FROM actions WHERE parent_kind = $1 AND shard_id = 0 AND parent_index = 0 ORDER BY action_index`, parent)
		require.NoError(t, err)
		type row struct {
			Index           int32
			Kind            string
			ParentIndex     *int32
			By, Sender, Key *string
			Method          *string
		}
		var got []row
		for rows.Next() {
			var r row
			require.NoError(t, rows.Scan(&r.Index, &r.Kind, &r.ParentIndex, &r.By, &r.Sender, &r.Key, &r.Method))
			got = append(got, r)
		}
		require.NoError(t, rows.Err())
		require.Len(t, got, 3, parent)
		require.Equal(t, "Delegate", got[0].Kind)
		require.Nil(t, got[0].ParentIndex)
		require.Equal(t, "relayer.near", *got[0].By, "the relayer paid")
		require.Equal(t, "user.near", *got[0].Sender, "the user acted")
		require.Equal(t, "ed25519:U", *got[0].Key)
		require.Equal(t, []string{"FunctionCall", "Transfer"}, []string{got[1].Kind, got[2].Kind})
		require.Equal(t, "play", *got[1].Method)
		for _, r := range got[1:] {
			require.Equal(t, int32(0), *r.ParentIndex)
			require.Equal(t, "relayer.near", *r.By)
			require.Equal(t, "user.near", *r.Sender)
		}
		require.Equal(t, []int32{0, 1, 2}, []int32{got[0].Index, got[1].Index, got[2].Index})
	}
	var plain int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM actions
		WHERE delegated_by IS NULL AND delegate_sender_id IS NULL AND delegate_parent_index IS NULL`).Scan(&plain))
	var all int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM actions`).Scan(&all))
	require.Equal(t, all-6, plain, "only the delegated rows name a delegation")

	// The documented query finds the relayed transaction's nested actions.
	var relayed string
	for _, q := range exampleQueries(t) {
		if strings.Contains(q, "paid_by") {
			relayed = q
		}
	}
	require.NotEmpty(t, relayed, "docs/database.md has the relayed transactions query")
	rows, err := s.Pool().Query(ctx, relayed)
	require.NoError(t, err)
	var found []string
	for rows.Next() {
		var hash, paid, acted, kind string
		var method *string
		var deposit any
		var height int64
		require.NoError(t, rows.Scan(&hash, &paid, &acted, &kind, &method, &deposit, &height))
		require.Equal(t, tx.Hash, hash)
		found = append(found, paid+" "+acted+" "+kind)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"relayer.near user.near FunctionCall", "relayer.near user.near Transfer"}, found)
}

// TestMigration9FillsInDelegateRowsIndexedBefore: a Delegate action stored
// before migration 00009 (kept as served in detail) learns its relayer and
// user from its transaction or receipt and its detail.
func TestMigration9FillsInDelegateRowsIndexedBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewEmptyDatabaseURL(t)
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, store.MigrateTo(ctx, pool, nil, 8))
	detail := `{"Delegate":{"delegate_action":{"sender_id":"user.near","receiver_id":"app.near","actions":[],"nonce":1,"max_block_height":9,"public_key":"ed25519:U"},"signature":"ed25519:S"}}`
	_, err = pool.Exec(ctx, `
CREATE TABLE transactions_h0 PARTITION OF transactions FOR VALUES FROM (0) TO (100);
CREATE TABLE receipts_h0 PARTITION OF receipts FOR VALUES FROM (0) TO (100);
CREATE TABLE actions_h0 PARTITION OF actions FOR VALUES FROM (0) TO (100);
INSERT INTO transactions (chunk_hash, index_in_chunk, hash, block_height, shard_id, signer_id, public_key,
    nonce, receiver_id, priority_fee, action_count)
VALUES ('C8', 0, 'T1', 8, 3, 'relayer.near', 'ed25519:R', 1, 'user.near', 0, 1);
INSERT INTO receipts (chunk_hash, index_in_chunk, receipt_id, block_height, shard_id, predecessor_id,
    receiver_id, kind, signer_id)
VALUES ('C8', 4, 'R1', 8, 3, 'relayer.near', 'user.near', 'Action', 'relayer2.near');
INSERT INTO actions (chunk_hash, shard_id, parent_kind, parent_index, action_index, block_height, tx_hash, receipt_id, kind, detail)
VALUES ('C8', 3, 'transaction', 0, 0, 8, 'T1', NULL, 'Delegate', '`+detail+`'),
       ('C8', 3, 'receipt', 4, 0, 8, NULL, 'R1', 'Delegate', '`+detail+`'),
       ('C8', 3, 'receipt', 4, 1, 8, NULL, 'R1', 'Transfer', NULL);`)
	require.NoError(t, err)
	// Up to 9 only: the archive has no chunks rows, which migration 14
	// (actions into their chunks row) refuses (TestActionsBecomeArraysAndBack).
	require.NoError(t, store.MigrateTo(ctx, pool, nil, 9))

	rows, err := pool.Query(ctx, `SELECT parent_kind, action_index, delegated_by, delegate_sender_id, delegate_parent_index
		FROM actions ORDER BY parent_kind, action_index`)
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var kind string
		var index int32
		var by, sender *string
		var parent *int32
		require.NoError(t, rows.Scan(&kind, &index, &by, &sender, &parent))
		require.Nil(t, parent)
		s := kind
		if by != nil {
			s += " " + *by + " " + *sender
		}
		got = append(got, s)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"receipt relayer2.near user.near", "receipt", "transaction relayer.near user.near"}, got)
}
