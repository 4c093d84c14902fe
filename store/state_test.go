package store_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// replay is the state a chain's changes leave after height, built by
// applying every change in order to maps.
type replay struct {
	accounts map[string]near.Account
	keys     map[string]map[string]near.AccessKeyView
	data     map[string]map[string][]byte
	code     map[string][]byte
}

func replayTo(c *storetest.Chain, height uint64) replay {
	r := replay{accounts: map[string]near.Account{}, keys: map[string]map[string]near.AccessKeyView{},
		data: map[string]map[string][]byte{}, code: map[string][]byte{}}
	for _, h := range c.Heights() {
		if h > height {
			break
		}
		b, _ := c.Bundle(h)
		for _, sc := range b.Changes {
			ch := sc.View.Change
			id := ch.AccountID
			switch sc.View.Type {
			case near.ChangeAccountUpdate:
				r.accounts[id] = *ch.Account
			case near.ChangeAccountDeletion:
				delete(r.accounts, id)
			case near.ChangeAccessKeyUpdate:
				if r.keys[id] == nil {
					r.keys[id] = map[string]near.AccessKeyView{}
				}
				r.keys[id][*ch.PublicKey] = *ch.AccessKey
			case near.ChangeAccessKeyDeletion:
				delete(r.keys[id], *ch.PublicKey)
			case near.ChangeDataUpdate:
				if r.data[id] == nil {
					r.data[id] = map[string][]byte{}
				}
				r.data[id][string(*ch.KeyBase64)] = *ch.ValueBase64
			case near.ChangeDataDeletion:
				delete(r.data[id], string(*ch.KeyBase64))
			case near.ChangeContractCodeUpdate:
				r.code[id] = *ch.CodeBase64
			case near.ChangeContractCodeDeletion:
				delete(r.code, id)
			}
		}
	}
	return r
}

func TestStateHistoryMatchesReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 45, Skipped: map[uint64]bool{9: true, 30: true}})
	commitRange(t, s, c, 1, 20, 0)
	commitRange(t, s, c, 21, 45, 20)

	for h := uint64(1); h <= 45; h++ {
		want := replayTo(c, h)
		for _, id := range []string{storetest.Alice, storetest.Bob, storetest.Contract} {
			acc, err := s.AccountAt(ctx, id, h)
			if exp, ok := want.accounts[id]; ok {
				require.NoError(t, err, "%s at %d", id, h)
				require.Equal(t, exp, acc, "%s at %d", id, h)
			} else {
				require.ErrorIs(t, err, store.ErrNotFound, "%s at %d", id, h)
			}

			keys, err := s.AccessKeysAt(ctx, id, h)
			require.NoError(t, err)
			require.Len(t, keys, len(want.keys[id]), "%s keys at %d", id, h)
			for _, k := range keys {
				require.Equal(t, want.keys[id][k.PublicKey], k.AccessKey)
				one, err := s.AccessKeyAt(ctx, id, k.PublicKey, h)
				require.NoError(t, err)
				require.Equal(t, k.AccessKey, one)
			}
			for _, pk := range []string{storetest.AliceKey, storetest.OtherKey} {
				if _, ok := want.keys[id][pk]; !ok {
					_, err := s.AccessKeyAt(ctx, id, pk, h)
					require.ErrorIs(t, err, store.ErrNotFound, "%s key %s at %d", id, pk, h)
				}
			}

			code, codeHash, err := s.ContractCodeAt(ctx, id, h)
			if exp, ok := want.code[id]; ok {
				require.NoError(t, err)
				require.Equal(t, exp, code)
				require.Equal(t, near.HashOf(exp).String(), codeHash)
			} else {
				require.ErrorIs(t, err, store.ErrNotFound, "code of %s at %d", id, h)
			}

			items, err := s.ContractStateAt(ctx, id, nil, h, 0)
			require.NoError(t, err)
			var wantKeys []string
			for k := range want.data[id] {
				wantKeys = append(wantKeys, k)
			}
			sort.Strings(wantKeys)
			require.Len(t, items, len(wantKeys), "state of %s at %d", id, h)
			for i, item := range items {
				require.Equal(t, wantKeys[i], string(item.Key))
				require.Equal(t, want.data[id][wantKeys[i]], item.Value)
				v, err := s.ContractDataAt(ctx, id, item.Key, h)
				require.NoError(t, err)
				require.Equal(t, item.Value, v)
			}
		}
	}
	_, err := s.ContractDataAt(ctx, storetest.Contract, []byte("k0"), 5)
	require.NoError(t, err, "k0 is written at 3 and only deleted at 15")
	_, err = s.ContractDataAt(ctx, storetest.Contract, []byte("k0"), 15)
	require.ErrorIs(t, err, store.ErrNotFound, "deleted at 15")
}

func TestContractStatePrefixAndLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Keys around prefix boundaries: "k", "k\xff", "k\xff\xff", "l".
	var changes []bundle.StateChange
	for _, k := range []string{"a", "k", "k1", "k\xff", "k\xff\xff", "l", "\xff\xff"} {
		key, value := []byte(k), []byte("value-of-"+k)
		changes = append(changes, bundle.StateChange{View: near.StateChangeWithCauseView{
			Cause: near.StateChangeCauseView{Type: "receipt_processing", ReceiptHash: storetest.FakeHash(k)},
			Type:  near.ChangeDataUpdate, Change: near.StateChangeValue{AccountID: storetest.Contract, KeyBase64: &key, ValueBase64: &value}}})
	}
	s, _ := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 1, Edit: func(b *bundle.Bundle) { b.Changes = changes }})

	keysOf := func(prefix string) []string {
		items, err := s.ContractStateAt(ctx, storetest.Contract, []byte(prefix), 1, 0)
		require.NoError(t, err)
		var out []string
		for _, it := range items {
			out = append(out, string(it.Key))
		}
		return out
	}
	require.Equal(t, []string{"k", "k1", "k\xff", "k\xff\xff"}, keysOf("k"))
	require.Equal(t, []string{"k\xff", "k\xff\xff"}, keysOf("k\xff"))
	require.Equal(t, []string{"\xff\xff"}, keysOf("\xff"))
	require.Len(t, keysOf(""), 7)
	require.Empty(t, keysOf("z"))

	_, err := s.ContractStateAt(ctx, storetest.Contract, nil, 1, 30)
	require.ErrorIs(t, err, store.ErrTooLarge)
	items, err := s.ContractStateAt(ctx, storetest.Contract, []byte("a"), 1, 30)
	require.NoError(t, err)
	require.Len(t, items, 1)
}

func TestStateQueriesUseIndexScans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 30})
	_, err := s.Pool().Exec(ctx, `ANALYZE`)
	require.NoError(t, err)
	plan := func(q string, args ...any) string {
		tx, err := s.Pool().Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx)
		if storetest.Citus() {
			// The setting below reaches the workers, which plan the shards.
			_, err = tx.Exec(ctx, "SET LOCAL citus.propagate_set_commands = 'local'")
			require.NoError(t, err)
		}
		_, err = tx.Exec(ctx, "SET LOCAL enable_seqscan = off")
		require.NoError(t, err)
		return strings.Join(rowList(t, tx, "EXPLAIN "+q, args...), "\n")
	}
	var alice, contract int32
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT id FROM accounts WHERE name = $1`, storetest.Alice).Scan(&alice))
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT id FROM accounts WHERE name = $1`, storetest.Contract).Scan(&contract))
	for name, p := range map[string]string{
		"account at":   plan(store.AccountAtSQL, alice, int64(10)),
		"data at":      plan(store.DataAtSQL, contract, []byte("k1"), int64(10)),
		"state prefix": plan(store.StateAtSQL, contract, []byte("k"), []byte("l"), int64(10)),
	} {
		require.Contains(t, p, "Index", "%s plan:\n%s", name, p)
		if storetest.Citus() {
			require.Contains(t, p, "Task Count: 1\n", "%s goes to one shard:\n%s", name, p)
		}
		require.NotContains(t, p, "Sort", "%s plan sorts:\n%s", name, p)
		t.Logf("%s plan:\n%s", name, p)
	}
}

func receiptTo(id, receiver string, actions ...near.ActionView) near.ReceiptView {
	return near.ReceiptView{PredecessorID: storetest.Alice, ReceiverID: receiver, ReceiptID: id,
		Receipt: near.ReceiptEnumView{Action: &near.ActionReceiptView{SignerID: storetest.Alice, SignerPublicKey: storetest.AliceKey,
			GasPrice: near.U128From64(1), OutputDataReceivers: []near.DataReceiverView{}, InputDataIDs: []string{}, Actions: actions}}}
}

func changeBy(receipt, typ string, v near.StateChangeValue) bundle.StateChange {
	view := near.StateChangeWithCauseView{Cause: near.StateChangeCauseView{Type: "receipt_processing", ReceiptHash: receipt}, Type: typ, Change: v}
	raw, _ := json.Marshal(view)
	return bundle.StateChange{View: view, JSON: raw}
}

func requireBase(t *testing.T, s *store.Store, id string, height uint64, source string) {
	t.Helper()
	h, src, err := s.AccountBase(context.Background(), id)
	require.NoError(t, err, id)
	require.Equal(t, height, h, id)
	require.Equal(t, source, src, id)
}

func requireNoBase(t *testing.T, s *store.Store, id string) {
	t.Helper()
	_, _, err := s.AccountBase(context.Background(), id)
	require.ErrorIs(t, err, store.ErrNotFound, id)
}

// TestAccountBases: Commit records creation (CreateAccount, implicit
// creation by a transfer that adds a key) and deletion bases, never a base
// for an update of an existing account; snapshots record theirs; the
// earliest base wins. The receipts are listed in the block of their
// changes, committed in one batch (judged in Go), and, as most receipts
// are, in the block before, committed block by block (the receipts of a
// batch's first block are listed in the batch before: judged by
// recordBasesSQL from the stored rows).
func TestAccountBases(t *testing.T) {
	t.Parallel()
	for _, layout := range []struct {
		name       string
		receiptsAt uint64
		batch      uint64 // blocks per commit
	}{{"receipts in the block, one batch", 3, 4}, {"receipts in the block before, a batch a block", 2, 1}} {
		t.Run(layout.name, func(t *testing.T) {
			t.Parallel()
			testAccountBases(t, layout.receiptsAt, layout.batch)
		})
	}
}

func testAccountBases(t *testing.T, receiptsAt, batch uint64) {
	ctx := context.Background()
	implicit, refunded := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	transfer := near.ActionView{Transfer: &near.TransferAction{Deposit: near.U128From64(5)}}
	s := storetest.NewStore(t)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 4, Edit: func(b *bundle.Bundle) {
		if b.Height() == receiptsAt {
			rs := &b.Chunks[0].View.Receipts
			*rs = append(*rs,
				receiptTo("r-new", "new.near", near.ActionView{CreateAccount: true}, transfer),
				receiptTo("r-old", "old.near", transfer),
				receiptTo("r-implicit", implicit, transfer),
				receiptTo("r-gone", "gone.near", near.ActionView{DeleteAccount: &near.DeleteAccountAction{BeneficiaryID: storetest.Alice}}),
				receiptTo("r-named", "named.near", transfer))
			refund := receiptTo("r-refund", refunded, transfer)
			refund.PredecessorID = "system"
			*rs = append(*rs, refund)
		}
		if b.Height() != 3 {
			return
		}
		pk := "ed25519:" + near.Base58Encode(make([]byte, 32))
		acc := &near.Account{Amount: near.U128From64(5), CodeHash: "11111111111111111111111111111111", StorageUsage: 100}
		b.Changes = append(b.Changes,
			changeBy("r-new", near.ChangeAccountUpdate, near.StateChangeValue{AccountID: "new.near", Account: acc}),
			changeBy("r-old", near.ChangeAccountUpdate, near.StateChangeValue{AccountID: "old.near", Account: acc}),
			changeBy("r-implicit", near.ChangeAccountUpdate, near.StateChangeValue{AccountID: implicit, Account: acc}),
			changeBy("r-implicit", near.ChangeAccessKeyUpdate, near.StateChangeValue{AccountID: implicit, PublicKey: &pk, AccessKey: &near.AccessKeyView{}}),
			changeBy("r-gone", near.ChangeAccountDeletion, near.StateChangeValue{AccountID: "gone.near"}),
			// A gas refund returning allowance to a function-call key, and a
			// named account's key written by a transfer: no creation.
			changeBy("r-refund", near.ChangeAccountUpdate, near.StateChangeValue{AccountID: refunded, Account: acc}),
			changeBy("r-refund", near.ChangeAccessKeyUpdate, near.StateChangeValue{AccountID: refunded, PublicKey: &pk, AccessKey: &near.AccessKeyView{}}),
			changeBy("r-named", near.ChangeAccountUpdate, near.StateChangeValue{AccountID: "named.near", Account: acc}),
			changeBy("r-named", near.ChangeAccessKeyUpdate, near.StateChangeValue{AccountID: "named.near", PublicKey: &pk, AccessKey: &near.AccessKeyView{}}))
	}})
	for lo := uint64(1); lo <= 4; lo += batch {
		commitRange(t, s, c, lo, min(lo+batch-1, 4), lo-1)
	}

	requireBase(t, s, "new.near", 3, "creation")
	requireBase(t, s, implicit, 3, "creation")
	requireBase(t, s, "gone.near", 3, "deletion")
	for _, id := range []string{"old.near", refunded, "named.near", storetest.Alice, storetest.Bob, storetest.Contract} {
		requireNoBase(t, s, id)
	}

	// The bases are derived from the stored rows alone: derived again from
	// them (as migration 00002 did for archives of layout 1, whose schema
	// it was written for), they are the same.
	_, err := s.Pool().Exec(ctx, "DELETE FROM account_bases")
	require.NoError(t, err)
	require.NoError(t, s.RecordBasesFromRows(ctx, 0, 1_000_000))
	requireBase(t, s, "new.near", 3, "creation")
	requireBase(t, s, implicit, 3, "creation")
	requireBase(t, s, "gone.near", 3, "deletion")
	require.Equal(t, 3, count(t, s, "account_bases"))

	// Re-committing the same heights changes nothing.
	commitRange(t, s, c, 2, 4, 1)
	requireBase(t, s, "new.near", 3, "creation")

	// A snapshot records a base (also for an account that did not exist);
	// the earliest base wins.
	require.NoError(t, s.PutAccountSnapshot(ctx, 2, "old.near", nil))
	require.NoError(t, s.PutAccountSnapshot(ctx, 4, "old.near", nil))
	requireBase(t, s, "old.near", 2, "snapshot")
	require.NoError(t, s.PutAccountSnapshot(ctx, 1, "new.near", nil))
	requireBase(t, s, "new.near", 1, "snapshot")

	// A deleted account reads as ErrDeleted, an unknown one not.
	_, err = s.AccountAt(ctx, "gone.near", 3)
	require.ErrorIs(t, err, store.ErrDeleted)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.AccountAt(ctx, "nobody.near", 3)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NotErrorIs(t, err, store.ErrDeleted)
}

// TestViewStateReadsKeysNotUpdates: the state of a contract with 2 keys
// updated 5,000 times each is read touching a few rows per key, not every
// update (the DISTINCT ON over the range read all 10,000).
func TestViewStateReadsKeysNotUpdates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	_, err := s.Pool().Exec(ctx, `
INSERT INTO accounts (name) VALUES ('busy.near');
INSERT INTO contract_data_history_ids (account, data_key, block_height, deleted, value)
SELECT (SELECT id FROM accounts WHERE name = 'busy.near'), convert_to('key' || k, 'UTF8'), h * 2 + k, false, int8send(h)
FROM generate_series(1, 5000) AS h, generate_series(0, 1) AS k`)
	require.NoError(t, err)
	_, err = s.Pool().Exec(ctx, `ANALYZE contract_data_history_ids`)
	require.NoError(t, err)
	var (
		busy int32
		plan json.RawMessage
	)
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT id FROM accounts WHERE name = 'busy.near'`).Scan(&busy))
	require.NoError(t, s.Pool().QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+store.StateAtSQL,
		busy, []byte{}, nil, int64(5000)).Scan(&plan))
	type node struct {
		Type  string  `json:"Node Type"`
		Rows  float64 `json:"Actual Rows"`
		Loops float64 `json:"Actual Loops"`
		Plans []node  `json:"Plans"`
	}
	var root []struct{ Plan node }
	require.NoError(t, json.Unmarshal(plan, &root))
	var most float64
	var walk func(n node)
	walk = func(n node) {
		most = max(most, n.Rows*n.Loops)
		for _, p := range n.Plans {
			walk(p)
		}
	}
	walk(root[0].Plan)
	require.Less(t, most, 20.0, "a plan node read %.0f rows: %s", most, plan)
	items, err := s.ContractStateAt(ctx, "busy.near", nil, 5000, 0)
	require.NoError(t, err)
	require.Len(t, items, 2)
	require.Equal(t, "key0", string(items[0].Key))
}
