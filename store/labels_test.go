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
		s, err := store.Open(ctx, url, store.Config{})
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
