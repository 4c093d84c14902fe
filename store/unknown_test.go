package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store/storetest"
)

// newerChanges are state changes as a newer nearcore serves them: an
// account with fields Nearline does not model, an access key with a gas-key
// permission and a member beyond nonce and permission, and a change type
// Nearline does not know.
var newerChanges = []string{
	`{"cause":{"type":"transaction_processing","tx_hash":"AA2wfmoibstL4ALMHsyEdkf9mSxBtX3xkC2fn28d3WEP","future_cause_field":1},"type":"account_update","change":{"account_id":"alice.near","amount":"100","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":182,"storage_paid_at":0,"global_contract_hash":null,"global_contract_account_id":"code.near"}}`,
	`{"cause":{"type":"transaction_processing","tx_hash":"AA2wfmoibstL4ALMHsyEdkf9mSxBtX3xkC2fn28d3WEP"},"type":"access_key_update","change":{"account_id":"alice.near","public_key":"ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847","access_key":{"nonce":7,"permission":{"GasKeyFunctionCall":[{"balance":"5","num_nonces":4},{"allowance":null,"receiver_id":"app.near","method_names":[]}]},"gas_key_info":{"balance":"5","num_nonces":4}}}}`,
	`{"cause":{"type":"transaction_processing","tx_hash":"AA2wfmoibstL4ALMHsyEdkf9mSxBtX3xkC2fn28d3WEP"},"type":"gas_key_nonce_update","change":{"account_id":"alice.near","public_key":"ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847","index":2,"nonce":11}}`,
}

// newerReceipts are receipts of kinds and actions Nearline does not model.
const newerReceipts = `[
{"predecessor_id":"system","receiver_id":"alice.near","receipt_id":"5X1uRjZ8sQhCbCTnKfGZ1hAVeygNzcYnvZVFe12J3fYD","receipt":{"GlobalContractDistribution":{"id":{"AccountId":"code.near"},"target_shard":1,"already_delivered_shards":[],"code":"AGFzbQ=="}},"priority":0},
{"predecessor_id":"alice.near","receiver_id":"alice.near","receipt_id":"7Y3dNw4bmdHBF6D9GYDsxTQzEkpVY8v8c1GnYjUCnwJp","receipt":{"Action":{"signer_id":"alice.near","signer_public_key":"ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847","gas_price":"100000000","output_data_receivers":[],"input_data_ids":[],"actions":[{"TransferToGasKey":{"public_key":"ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847","deposit":"7"}}],"is_promise_yield":false}},"priority":0}
]`

// TestUnknownFieldsAndVariantsAreStoredAndServedVerbatim commits a block
// whose state changes carry what Nearline does not model: the commit goes
// through, counts what it did not know, and every change reads back exactly
// as it came; the gas-key access key keeps its permission in history.
func TestUnknownFieldsAndVariantsAreStoredAndServedVerbatim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 8, Edit: func(b *bundle.Bundle) {
		if b.Height() != 8 {
			return
		}
		for _, text := range newerChanges {
			var view near.StateChangeWithCauseView
			require.NoError(t, json.Unmarshal([]byte(text), &view))
			b.Changes = append(b.Changes, bundle.StateChange{View: view, JSON: json.RawMessage(text)})
		}
	}})
	commitRange(t, s, c, 1, 7, 0)
	stats := commitRange(t, s, c, 8, 8, 7) // what Nearline does not model never stops a commit
	require.Equal(t, map[string]int{
		"state_change:gas_key_nonce_update":        1,
		"access_key_permission:GasKeyFunctionCall": 1,
	}, stats.Unknown)

	all := []string{near.ChangeAccountUpdate, near.ChangeAccessKeyUpdate, "gas_key_nonce_update"}
	got, err := s.StateChanges(ctx, 8, all, []string{"alice.near"})
	require.NoError(t, err)
	var served []string
	for _, g := range got {
		out, err := json.Marshal(g)
		require.NoError(t, err)
		served = append(served, string(out))
	}
	for _, text := range newerChanges {
		require.Contains(t, served, text, "served byte for byte as stored")
	}

	acc, err := s.AccountAt(ctx, "alice.near", 8)
	require.NoError(t, err)
	view, err := json.Marshal(near.AccountView{Account: acc, BlockStamp: near.BlockStamp{BlockHeight: 8, BlockHash: "h"}})
	require.NoError(t, err)
	require.Equal(t, `{"amount":"100","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":182,"storage_paid_at":0,"global_contract_hash":null,"global_contract_account_id":"code.near","block_height":8,"block_hash":"h"}`,
		string(view), "view_account keeps the members Nearline does not model, in their place")

	var globalHash, globalAccount *string
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT global_contract_hash, global_contract_account_id FROM account_history
		WHERE account_id = 'alice.near' AND block_height = 8`).Scan(&globalHash, &globalAccount))
	require.Nil(t, globalHash, "a null global_contract_hash is no hash")
	require.Equal(t, "code.near", *globalAccount, "the analytics column names the global code the account uses")

	key, err := s.AccessKeyAt(ctx, "alice.near", "ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847", 8)
	require.NoError(t, err)
	require.False(t, key.Permission.Known())
	perm, err := json.Marshal(key.Permission)
	require.NoError(t, err)
	require.JSONEq(t, `{"GasKeyFunctionCall":[{"balance":"5","num_nonces":4},{"allowance":null,"receiver_id":"app.near","method_names":[]}]}`, string(perm))
	const wantKey = `{"nonce":7,"permission":{"GasKeyFunctionCall":[{"balance":"5","num_nonces":4},{"allowance":null,"receiver_id":"app.near","method_names":[]}]},"gas_key_info":{"balance":"5","num_nonces":4}}`
	result, err := json.Marshal(near.AccessKeyResult{AccessKeyView: key, BlockStamp: near.BlockStamp{BlockHeight: 8, BlockHash: "h"}})
	require.NoError(t, err)
	require.Equal(t, wantKey[:len(wantKey)-1]+`,"block_height":8,"block_hash":"h"}`, string(result),
		"view_access_key keeps the members Nearline does not model, in their place")
	keys, err := s.AccessKeysAt(ctx, "alice.near", 8)
	require.NoError(t, err)
	var listed []string
	for _, k := range keys {
		out, err := json.Marshal(k.AccessKey)
		require.NoError(t, err)
		listed = append(listed, string(out))
	}
	require.Contains(t, listed, wantKey, "view_access_key_list too")
	var extras int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM access_key_history WHERE extra IS NOT NULL`).Scan(&extras))
	require.Equal(t, 1, extras, "a key with nothing beyond nonce and permission stores NULL")
}
