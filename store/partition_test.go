package store_test

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/docs"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

var blockKeyed = []string{"blocks", "skipped_heights", "block_chunks", "chunks", "transactions_ids", "receipts_ids",
	"execution_outcomes_ids", "transaction_statuses", "block_changes",
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
		require.Equal(t, partitionNames(table, 0, p, 2*p, 3*p), attachedPartitions(t, pool, table), table)
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
	requireServed(t, s, p+10, p-1, 2*p, 2*p+20)
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

// partitionsSection is docs/database.md's section on partitions.
const partitionsSection = "## Partitions"

var (
	// documentedPartitioned matches the Partitions section's sentence
	// that lists the partitioned tables.
	documentedPartitioned = regexp.MustCompile(`The block-keyed tables \(([^)]*)\) are\s+range-partitioned`)
	// detachTables matches the array of tables the detach block loops over.
	detachTables = regexp.MustCompile(`ARRAY\[([^\]]*)\]`)
	// firstHeight matches the detach block's one setting, the first
	// height of the range it detaches.
	firstHeight = regexp.MustCompile(`first_height bigint := (\d+);`)
	// quotedName matches a table name in backquotes (Markdown) or single
	// quotes (SQL).
	quotedName = regexp.MustCompile("[`']([a-z0-9_]+)[`']")
)

// TestPartitionsDocDetachesEveryPartitionedTable: on an archive holding
// the partitions of 0, P, 2P and 3P, docs/database.md's "Partitions"
// lists exactly the tables the catalog has partitioned, both in its text
// and in its detach block; it names each view with the table it reads, a
// partitioned one; and its detach block, run with first_height set to P as
// a reader sets it, detaches the range P to 2P-1 from every partitioned
// table: the partitions leave pg_inherits but keep their rows (to move or
// drop), that range's rows are gone from every table and view, and the
// other ranges answer as before.
func TestPartitionsDocDetachesEveryPartitionedTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const p = storetest.PartitionSize
	s, _ := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 2*p + 10})
	pool := s.Pool()
	section := docs.Section(t, docsFile, partitionsSection)

	keys := map[string]string{} // partitioned table: its partition key
	var table, key string
	rows, err := pool.Query(ctx, `SELECT c.relname::text, a.attname::text FROM pg_partitioned_table pt
		JOIN pg_class c ON c.oid = pt.partrelid
		JOIN pg_attribute a ON a.attrelid = pt.partrelid AND a.attnum = pt.partattrs[0]
		WHERE c.relnamespace = 'public'::regnamespace`)
	require.NoError(t, err)
	_, err = pgx.ForEachRow(rows, []any{&table, &key}, func() error {
		keys[table] = key
		return nil
	})
	require.NoError(t, err)
	partitioned := slices.Sorted(maps.Keys(keys))
	require.Contains(t, partitioned, "blocks", "the catalog query found no partitioned table")
	for _, table := range partitioned {
		require.Equal(t, partitionNames(table, 0, p, 2*p, 3*p), attachedPartitions(t, pool, table), table)
	}

	text := documentedPartitioned.FindStringSubmatch(section)
	require.NotNil(t, text, "%s, %s: no sentence \"The block-keyed tables (...) are range-partitioned\"", docsFile, partitionsSection)
	require.Equal(t, partitioned, sortedNames(text[1]), "the tables %s says are partitioned", docsFile)
	detach := docs.SQL(t, docsFile, partitionsSection)[0]
	array := detachTables.FindStringSubmatch(detach)
	require.NotNil(t, array, "the detach block has no ARRAY[...] of tables:\n%s", detach)
	require.Equal(t, partitioned, sortedNames(array[1]), "the tables %s's detach block detaches from", docsFile)

	// Views follow their base tables; keys gets them by block_height.
	var uses [][2]string // a view and a table it reads
	var view, base string
	// (An extension's views, such as Citus's citus_tables, are not the
	// archive's.)
	rows, err = pool.Query(ctx, `SELECT view_name::text, table_name::text FROM information_schema.view_table_usage
		WHERE view_schema = 'public' AND NOT EXISTS (SELECT 1 FROM pg_depend d
			WHERE d.classid = 'pg_class'::regclass AND d.objid = format('%I', view_name)::regclass AND d.deptype = 'e')`)
	require.NoError(t, err)
	_, err = pgx.ForEachRow(rows, []any{&view, &base}, func() error {
		uses = append(uses, [2]string{view, base})
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, uses, "the catalog query found no view")
	for _, use := range uses {
		if !slices.Contains(partitioned, use[1]) {
			continue // accounts, or the state history under its view
		}
		if use[1] != use[0]+"_ids" && slices.Contains(uses, [2]string{use[0], use[0] + "_ids"}) {
			continue // a subquery's table: the view's rows are <view>_ids's
		}
		says := fmt.Sprintf("`%s` (a view of `%s`)", use[0], use[1])
		require.True(t, strings.Contains(section, says), "%s, %s does not say %s", docsFile, partitionsSection, says)
		keys[use[0]] = keys[use[1]]
	}

	before := rangeCounts(t, pool, keys, p, 2*p)
	for _, name := range []string{"blocks", "actions", "state_changes"} {
		require.Positive(t, before[name][0], "%s has rows in the range to detach", name)
		require.Positive(t, before[name][1], "%s has rows outside it", name)
	}

	require.Len(t, firstHeight.FindAllString(detach, -1), 1, "the detach block sets first_height once:\n%s", detach)
	_, err = pool.Exec(ctx, firstHeight.ReplaceAllString(detach, fmt.Sprintf("first_height bigint := %d;", p)))
	require.NoError(t, err, detach)

	for _, table := range partitioned {
		require.Equal(t, partitionNames(table, 0, 2*p, 3*p), attachedPartitions(t, pool, table), table)
		var kept int
		require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s",
			pgx.Identifier{store.PartitionName(table, p, p)}.Sanitize())).Scan(&kept))
		require.Equal(t, before[table][0], kept, "%s's detached partition keeps the range's rows", table)
	}
	after := rangeCounts(t, pool, keys, p, 2*p)
	for name, n := range before {
		require.Equal(t, [2]int{0, n[1]}, after[name], "%s: rows in the detached range, and outside it", name)
	}
	requireServed(t, s, p+10, p-1, 2*p, 2*p+10)
}

// requireServed checks that the store answers not found for the block and
// the state changes at detached, a height of a detached range, and answers
// them at each of the heights outside it.
func requireServed(t *testing.T, s *store.Store, detached uint64, outside ...uint64) {
	t.Helper()
	ctx := context.Background()
	_, err := s.BlockView(ctx, near.HeightID(detached))
	require.ErrorIs(t, err, store.ErrNotFound, "a detached range is not served")
	_, err = s.StateChangesJSON(ctx, detached, []string{"account_update"}, []string{storetest.Alice})
	require.ErrorIs(t, err, store.ErrNotFound)
	for _, h := range outside {
		_, err := s.BlockView(ctx, near.HeightID(h))
		require.NoError(t, err, "height %d outside the detached range", h)
		got, err := s.StateChangesJSON(ctx, h, []string{"account_update"}, []string{storetest.Alice})
		require.NoError(t, err)
		require.NotEmpty(t, got, "height %d", h)
	}
}

// partitionNames returns table's partitions of the ranges starting at
// starts, with storetest.PartitionSize heights each.
func partitionNames(table string, starts ...int64) []string {
	var names []string
	for _, start := range starts {
		names = append(names, store.PartitionName(table, start, storetest.PartitionSize))
	}
	return names
}

// attachedPartitions returns the partitions attached to table, by name.
func attachedPartitions(t *testing.T, db storetest.Querier, table string) []string {
	t.Helper()
	return queryStrings(t, db, `SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = $1::regclass ORDER BY 1`, table)
}

// rangeCounts returns, for each table or view of keys, its rows whose key
// is from lo to hi-1 and its other rows.
func rangeCounts(t *testing.T, db storetest.Querier, keys map[string]string, lo, hi int64) map[string][2]int {
	t.Helper()
	counts := map[string][2]int{}
	for name, key := range keys {
		var in, out int
		q := fmt.Sprintf(`SELECT count(*) FILTER (WHERE %[1]s >= $1 AND %[1]s < $2), count(*) FILTER (WHERE %[1]s < $1 OR %[1]s >= $2) FROM %[2]s`,
			pgx.Identifier{key}.Sanitize(), pgx.Identifier{name}.Sanitize())
		require.NoError(t, db.QueryRow(context.Background(), q, lo, hi).Scan(&in, &out), q)
		counts[name] = [2]int{in, out}
	}
	return counts
}

// sortedNames returns the quoted table names of list, sorted.
func sortedNames(list string) []string {
	var names []string
	for _, m := range quotedName.FindAllStringSubmatch(list, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return names
}
