package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestWritersInternTheSameNames: two transactions number overlapping
// names at once. The second waits for the first's new names, then finds
// them by asking again (they were committed after its statement's
// snapshot); both see one number per name, no number is spent on a name
// that had one, and neither deadlocks.
func TestWritersInternTheSameNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	pool := s.Pool()

	first, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = first.Rollback(ctx) }() // a no-op once committed
	ids1, err := store.InternAccounts(ctx, first, []string{"a.near", "b.near", "c.near"})
	require.NoError(t, err)
	require.Len(t, ids1, 3)

	type result struct {
		ids map[string]int32
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var err error
			r.ids, err = store.InternAccounts(ctx, tx, []string{"b.near", "c.near", "d.near"})
			return err
		})
		done <- r
	}()
	select {
	case r := <-done:
		t.Fatalf("the second writer did not wait for the first's names: %v, %v", r.ids, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, first.Commit(ctx))
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, ids1["b.near"], r.ids["b.near"])
	require.Equal(t, ids1["c.near"], r.ids["c.near"])
	require.NotContains(t, []int32{ids1["a.near"], ids1["b.near"], ids1["c.near"]}, r.ids["d.near"])

	// Names that have numbers take no new one.
	var again map[string]int32
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		again, err = store.InternAccounts(ctx, tx, []string{"a.near", "b.near", "c.near", "d.near"})
		return err
	}))
	require.Equal(t, map[string]int32{"a.near": ids1["a.near"], "b.near": ids1["b.near"], "c.near": ids1["c.near"],
		"d.near": r.ids["d.near"]}, again)
	var last int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT last_value FROM accounts_id_seq`).Scan(&last))
	require.Equal(t, int64(r.ids["d.near"]), last, "the sequence was not taken from again")
}

// TestAnAccountReadBeforeItHasANumberIsFoundOnceItHasOne: a read names an
// account by its number, remembered once read; an account that has none
// yet reads as not there, and is found once a commit numbers it.
func TestAnAccountReadBeforeItHasANumberIsFoundOnceItHasOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	_, err := s.AccountAt(ctx, "late.near", 10)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, pgx.BeginFunc(ctx, s.Pool(), func(tx pgx.Tx) error {
		ids, err := store.InternAccounts(ctx, tx, []string{"late.near"})
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO account_history_ids (account, block_height, deleted, amount, locked, storage_usage, storage_paid_at)
			VALUES ($1, 5, false, 7, 0, 100, 0)`, ids["late.near"])
		return err
	}))
	for range 2 { // looked up, then remembered
		acc, err := s.AccountAt(ctx, "late.near", 10)
		require.NoError(t, err)
		require.Equal(t, "7", acc.Amount.String())
	}
	_, err = s.AccountAt(ctx, "late.near", 4)
	require.ErrorIs(t, err, store.ErrNotFound, "before its first row")
}
