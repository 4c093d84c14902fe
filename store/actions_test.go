package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestActionDetailOnlyWhereTypedColumnsFallShort: a Transfer and a
// FunctionCall are their typed columns (detail NULL, empty args kept as
// empty, not NULL); a deploy names its code by hash and the code is in
// contract_codes; an AddKey keeps its permission in detail, and an action
// Nearline does not model is kept as it came.
func TestActionDetailOnlyWhereTypedColumnsFallShort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 1})
	b, ok := c.Bundle(1)
	require.True(t, ok)
	code := []byte("\x00asm deployed")
	var other near.ActionView
	require.NoError(t, json.Unmarshal([]byte(`{"FutureAction":{"sender_id":"a.near","future":1}}`), &other))
	b.Chunks[0].View.Transactions[0].Actions = []near.ActionView{
		{Transfer: &near.TransferAction{Deposit: near.U128From64(5)}},
		{FunctionCall: &near.FunctionCallAction{MethodName: "go", Args: []byte{}, Gas: 7, Deposit: near.U128From64(0)}},
		{DeployContract: &near.DeployContractAction{Code: code}},
		{AddKey: &near.AddKeyAction{PublicKey: "ed25519:K", AccessKey: near.AccessKeyView{Nonce: 0,
			Permission: near.AccessKeyPermission{}}}},
		other,
	}
	b.Chunks[0].JSON = nil
	_, err := s.Commit(ctx, []store.Bundle{b})
	require.NoError(t, err)

	rows, err := s.Pool().Query(ctx, `SELECT kind, detail::text, code_hash, args FROM actions
		WHERE parent_kind = 'transaction' AND shard_id = 0 ORDER BY action_index`)
	require.NoError(t, err)
	type action struct {
		Kind     string
		Detail   *string
		CodeHash *string
		Args     []byte
	}
	var got []action
	for rows.Next() {
		var a action
		require.NoError(t, rows.Scan(&a.Kind, &a.Detail, &a.CodeHash, &a.Args))
		got = append(got, a)
	}
	require.NoError(t, rows.Err())
	require.Len(t, got, 5)
	require.Equal(t, "Transfer", got[0].Kind)
	require.Nil(t, got[0].Detail)
	require.Nil(t, got[1].Detail)
	require.NotNil(t, got[1].Args, "empty args are empty, not NULL")
	require.Empty(t, got[1].Args)
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
	s := storetest.NewStore(t)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 1})
	b, ok := c.Bundle(1)
	require.True(t, ok)
	delegate := near.ActionView{Delegate: &near.SignedDelegateAction{
		DelegateAction: near.DelegateAction{SenderID: "user.near", ReceiverID: "app.near", Nonce: 7, MaxBlockHeight: 100, PublicKey: "ed25519:U",
			Actions: []near.ActionView{
				{FunctionCall: &near.FunctionCallAction{MethodName: "play", Args: []byte(`{}`), Gas: 9, Deposit: near.U128From64(0)}},
				{Transfer: &near.TransferAction{Deposit: near.U128From64(3)}},
			}},
		Signature: "ed25519:S"}}
	tx := &b.Chunks[0].View.Transactions[0]
	tx.SignerID, tx.ReceiverID, tx.Actions = "relayer.near", "user.near", []near.ActionView{delegate}
	rc := &b.Chunks[0].View.Receipts[0]
	rc.Receipt = near.ReceiptEnumView{Action: &near.ActionReceiptView{SignerID: "relayer.near", SignerPublicKey: "ed25519:R",
		OutputDataReceivers: []near.DataReceiverView{}, InputDataIDs: []string{}, Actions: []near.ActionView{delegate}}}
	b.Chunks[0].JSON = nil
	_, err := s.Commit(ctx, []store.Bundle{b})
	require.NoError(t, err)

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

	// The README's query finds the relayed transaction's nested actions.
	var readme string
	for _, q := range readmeQueries(t) {
		if strings.Contains(q, "paid_by") {
			readme = q
		}
	}
	require.NotEmpty(t, readme, "README has the relayed transactions query")
	rows, err := s.Pool().Query(ctx, readme)
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
