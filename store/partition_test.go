package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

var blockKeyed = []string{"blocks", "skipped_heights", "block_chunks", "chunks", "transactions", "receipts",
	"execution_outcomes", "transaction_statuses", "block_changes",
	"block_tx_statuses"}

// TestBlockKeyedTablesArePartitionedByHeight: committing heights 1 to
// 2P+20 with P heights per partition creates the partitions of 0, P and 2P
// and, ahead, 3P, for every block-keyed table; detaching the range P to
// 2P-1 takes exactly its blocks out of the archive (the store answers not
// found there, and everything else as before), and attaching it back
// restores them.
func TestBlockKeyedTablesArePartitionedByHeight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	const p = storetest.PartitionSize
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 2*p + 20})
	commitRange(t, s, c, 1, 2*p+20, 0)

	pool := s.Pool()
	for _, table := range blockKeyed {
		var names []string
		rows, err := pool.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
			WHERE i.inhparent = $1::regclass ORDER BY 1`, table)
		require.NoError(t, err)
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			names = append(names, n)
		}
		require.NoError(t, rows.Err())
		var want []string
		for _, start := range []int64{0, p, 2 * p, 3 * p} {
			want = append(want, store.PartitionName(table, start, p))
		}
		require.Equal(t, want, names, table)
	}

	before, err := s.BlockView(ctx, near.HeightID(p+10))
	require.NoError(t, err)
	detach := func(verb string) {
		for _, table := range blockKeyed {
			part := store.PartitionName(table, p, p)
			q := fmt.Sprintf("ALTER TABLE %s DETACH PARTITION %s", table, part)
			if verb == "attach" {
				q = fmt.Sprintf("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (%d) TO (%d)", table, part, p, 2*p)
			}
			_, err := pool.Exec(ctx, q)
			require.NoError(t, err, q)
		}
	}
	detach("detach")
	_, err = s.BlockView(ctx, near.HeightID(p+10))
	require.ErrorIs(t, err, store.ErrNotFound, "a detached range is not served")
	_, err = s.StateChangesJSON(ctx, p+10, []string{"account_update"}, []string{storetest.Alice})
	require.ErrorIs(t, err, store.ErrNotFound)
	for _, h := range []uint64{p - 1, 2 * p, 2*p + 20} {
		_, err := s.BlockView(ctx, near.HeightID(h))
		require.NoError(t, err, "height %d outside the detached range", h)
		got, err := s.StateChangesJSON(ctx, h, []string{"account_update"}, []string{storetest.Alice})
		require.NoError(t, err)
		require.NotEmpty(t, got, "height %d", h)
	}
	detach("attach")
	after, err := s.BlockView(ctx, near.HeightID(p+10))
	require.NoError(t, err)
	require.Equal(t, string(before), string(after))

	// Heights of a new range get their partitions with the batch.
	c2 := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 5*p + p/2})
	commitRange(t, s, c2, 2*p+21, 5*p+p/2, 2*p+20)
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'blocks'::regclass`).Scan(&n))
	require.Equal(t, 7, n, "partitions 0 to 6P")
}
