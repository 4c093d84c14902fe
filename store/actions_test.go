package store_test

import (
	"context"
	"encoding/json"
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
	require.NoError(t, json.Unmarshal([]byte(`{"Delegate":{"sender_id":"a.near","future":1}}`), &other))
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
	require.JSONEq(t, `{"Delegate":{"sender_id":"a.near","future":1}}`, *got[4].Detail)
}
