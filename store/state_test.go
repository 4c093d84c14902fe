package store_test

import (
	"context"
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
		conn, err := s.Pool().Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, "SET enable_seqscan = off")
		require.NoError(t, err)
		return strings.Join(rowList(t, conn, "EXPLAIN "+q, args...), "\n")
	}
	for name, p := range map[string]string{
		"account at":   plan(`SELECT * FROM account_history WHERE account_id = $1 AND block_height <= $2 ORDER BY block_height DESC LIMIT 1`, storetest.Alice, int64(10)),
		"data at":      plan(`SELECT * FROM contract_data_history WHERE account_id = $1 AND data_key = $2 AND block_height <= $3 ORDER BY block_height DESC LIMIT 1`, storetest.Contract, []byte("k1"), int64(10)),
		"state prefix": plan(`SELECT DISTINCT ON (data_key) data_key, deleted, value FROM contract_data_history WHERE account_id = $1 AND data_key >= $2 AND ($3::bytea IS NULL OR data_key < $3) AND block_height <= $4 ORDER BY data_key DESC, block_height DESC`, storetest.Contract, []byte("k"), []byte("l"), int64(10)),
	} {
		require.Contains(t, p, "Index", "%s plan:\n%s", name, p)
		require.NotContains(t, p, "Sort", "%s plan sorts:\n%s", name, p)
		t.Logf("%s plan:\n%s", name, p)
	}
}
