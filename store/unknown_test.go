package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
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

// TestGlobalContractDistributionIsKeptAndTimed commits a chunk that carries
// a GlobalContractDistribution receipt (for shard 1) beside an action
// Nearline does not model: the distribution is recorded, its code kept,
// and it is not counted as unknown; the code is on shard 1 from the first
// chunk shard 1 has at or after the receipt's block (shard 1 misses its
// chunks at 8 and 9), and on no other shard.
func TestGlobalContractDistributionIsKeptAndTimed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	var receipts []near.ReceiptView
	require.NoError(t, json.Unmarshal([]byte(newerReceipts), &receipts))
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 12, Missing: func(h uint64, shard int) bool {
		return shard == 1 && (h == 8 || h == 9)
	}, Edit: func(b *bundle.Bundle) {
		if b.Height() != 8 {
			return
		}
		require.Equal(t, uint64(0), b.Chunks[0].View.Header.ShardID)
		b.Chunks[0].View.Receipts = append(b.Chunks[0].View.Receipts, receipts...)
		b.Chunks[0].JSON = nil // stored as encoded from the view
	}})
	commitRange(t, s, c, 1, 7, 0)
	stats := commitRange(t, s, c, 8, 8, 7)
	require.Equal(t, map[string]int{"action:TransferToGasKey": 1}, stats.Unknown,
		"a distribution receipt is modelled; the gas-key action is not")
	commitRange(t, s, c, 9, 12, 8)

	id := near.GlobalContractID{AccountID: "code.near"}
	for h, want := range map[uint64]bool{7: false, 8: false, 9: false, 10: true, 12: true} {
		code, hash, err := s.GlobalContractCodeAt(ctx, id, 1, h)
		if !want {
			require.ErrorIs(t, err, store.ErrNotFound, "height %d", h)
			continue
		}
		require.NoError(t, err, "height %d", h)
		require.Equal(t, []byte("\x00asm"), code)
		require.Equal(t, near.HashOf(code).String(), hash)
	}
	_, _, err := s.GlobalContractCodeAt(ctx, id, 0, 12)
	require.ErrorIs(t, err, store.ErrNotFound, "the receipt targets shard 1 only")
	_, _, err = s.GlobalContractCodeAt(ctx, near.GlobalContractID{CodeHash: near.HashOf([]byte("\x00asm")).String()}, 1, 12)
	require.ErrorIs(t, err, store.ErrNotFound, "deployed by account id, not by hash")
}

// TestUnknownReceiptKindIsStoredAndCounted commits a chunk carrying a
// receipt of a kind Nearline does not model: the commit goes through, the
// kind is counted once, and EXPERIMENTAL_receipt's read gives the receipt
// back byte for byte, as the chunk carried it.
func TestUnknownReceiptKindIsStoredAndCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const text = `{"predecessor_id":"system","receiver_id":"alice.near","receipt_id":"9b5y1pbYz4cMBFFxAgTDPk6ib4YVS1bsmEAhNPdUCyQQ","receipt":{"FutureReceipt":{"payload":[1,2],"note":"x"}},"priority":0}`
	var future near.ReceiptView
	require.NoError(t, json.Unmarshal([]byte(text), &future))
	require.NotNil(t, future.Receipt.Other, "the kind is one Nearline does not model")
	s := storetest.NewStore(t)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 3, Edit: func(b *bundle.Bundle) {
		if b.Height() == 2 {
			b.Chunks[0].View.Receipts = append(b.Chunks[0].View.Receipts, future)
			b.Chunks[0].JSON = nil // stored as encoded from the view
		}
	}})
	commitRange(t, s, c, 1, 1, 0)
	stats := commitRange(t, s, c, 2, 3, 1)
	require.Equal(t, map[string]int{"receipt:FutureReceipt": 1}, stats.Unknown)
	got, err := s.Receipt(ctx, "9b5y1pbYz4cMBFFxAgTDPk6ib4YVS1bsmEAhNPdUCyQQ")
	require.NoError(t, err)
	require.Equal(t, text, string(got), "served as the chunk carried it")
}

// TestNewLabelsAreAddedInOrder: a change type, a cause and an action kind
// the enum types do not have yet are added by the commit that first writes
// them, in their byte-order place, once (a second store, with nothing
// cached, commits the same labels again); rows read them back as text and
// sort by them as text sorts.
func TestNewLabelsAreAddedInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewDatabaseURL(t)
	var stores []*store.Store
	for range 2 {
		s, err := store.Open(ctx, url, store.Config{}, nil)
		require.NoError(t, err)
		t.Cleanup(s.Close)
		stores = append(stores, s)
	}
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 3, Edit: func(b *bundle.Bundle) {
		text := `{"cause":{"type":"gas_key_refund"},"type":"gas_key_nonce_update","change":{"account_id":"alice.near","index":2,"nonce":11}}`
		var view near.StateChangeWithCauseView
		require.NoError(t, json.Unmarshal([]byte(text), &view))
		b.Changes = append(b.Changes, bundle.StateChange{View: view, JSON: json.RawMessage(text)})
		var future near.ActionView
		require.NoError(t, json.Unmarshal([]byte(`{"FutureAction":{"x":1}}`), &future))
		tx := &b.Chunks[0].View.Transactions[0]
		tx.Actions = append(tx.Actions, future)
		b.Chunks[0].JSON = nil
	}})
	for i, h := range []uint64{1, 2} {
		commitRange(t, stores[i], c, h, h, h-1)
	}

	labels := func(typ string) []string {
		rows, _ := stores[0].Pool().Query(ctx, `SELECT enumlabel::text FROM pg_enum WHERE enumtypid = $1::regtype ORDER BY enumsortorder`, typ)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	require.Equal(t, []string{"access_key_deletion", "access_key_update", "account_deletion", "account_update",
		"contract_code_deletion", "contract_code_update", "data_deletion", "data_update", "gas_key_nonce_update"},
		labels("state_change_type"))
	causes := labels("state_change_cause")
	require.Contains(t, causes, "gas_key_refund")
	require.IsIncreasing(t, causes, "in byte order")
	kinds := labels("action_kind")
	require.Contains(t, kinds, "FutureAction")
	require.IsIncreasing(t, kinds, "in byte order")

	var n int
	require.NoError(t, stores[0].Pool().QueryRow(ctx, `SELECT count(*) FROM state_changes
		WHERE change_type = 'gas_key_nonce_update' AND cause_type::text = 'gas_key_refund'`).Scan(&n))
	require.Equal(t, 2, n)
	rows, _ := stores[0].Pool().Query(ctx, `SELECT DISTINCT kind::text FROM actions ORDER BY 1`)
	byText, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	rows, _ = stores[0].Pool().Query(ctx, `SELECT kind::text FROM (SELECT DISTINCT kind FROM actions) k ORDER BY kind`)
	byLabel, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, byLabel, "FutureAction")
	require.Equal(t, byText, byLabel, "labels sort as their text")
	got, err := stores[1].StateChangesJSON(ctx, 2, []string{"gas_key_nonce_update", "not_a_type"}, []string{"alice.near"})
	require.NoError(t, err)
	require.Len(t, got, 1, "asking for a type no row has is no error")
}
