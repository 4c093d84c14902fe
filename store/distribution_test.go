package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/docs"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// The placements, shortened for the checks below.
const (
	distributed = store.PlacementDistributed
	reference   = store.PlacementReference
	local       = store.PlacementLocal
)

func planEntry(table string) (store.Placement, bool) {
	for _, e := range store.DistributionPlan() {
		if e.Table == table {
			return e, true
		}
	}
	return store.Placement{}, false
}

// TestDistributionPlanFitsTheSchema reads the migrated schema from the
// catalog and checks that the plan can be applied as it stands (Citus
// enforces a primary key or unique index of a distributed table only when
// it includes the distribution column): the plan places exactly the tables
// the migrations create, each once; every distributed table's distribution
// column exists and is NOT NULL, its primary key and every unique index
// include it, and the tables of a colocation group distribute by columns of
// one type; every range-partitioned table is distributed by its partition
// key, and these are exactly the store's block-keyed tables; reference and
// local tables are not partitioned; a foreign key, should one appear, is
// one Citus accepts (to a reference table, or within a colocation group
// over the distribution column).
func TestDistributionPlanFitsTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, storetest.NewDatabaseURL(t))
	require.NoError(t, err)
	defer conn.Close(ctx)

	var planned []string
	for _, e := range store.DistributionPlan() {
		planned = append(planned, e.Table)
		switch e.Placement {
		case distributed:
			require.NotEmpty(t, e.Column, e.Table)
			group, ok := planEntry(e.ColocateWith)
			require.True(t, ok, "%s: colocated with unplanned %s", e.Table, e.ColocateWith)
			require.Equal(t, distributed, group.Placement, "%s: colocated with %s", e.Table, e.ColocateWith)
			require.Equal(t, group.Table, group.ColocateWith, "%s: %s is not the first table of its group", e.Table, group.Table)
		case reference, local:
			require.Empty(t, e.Column, e.Table)
			require.Empty(t, e.ColocateWith, e.Table)
		default:
			t.Fatalf("%s: unknown placement %q", e.Table, e.Placement)
		}
	}
	sorted := slices.Sorted(slices.Values(planned))
	require.Equal(t, sorted, slices.Compact(slices.Clone(sorted)), "a table is planned twice")

	// Every table of the schema (partitions are their parent's).
	tables := queryStrings(t, conn, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`)
	require.Equal(t, sorted, tables, "the plan must place exactly the schema's tables")

	columnType := func(table, column string) (typ string, notNull bool) {
		err := conn.QueryRow(ctx, `SELECT format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a
			WHERE a.attrelid = $1::regclass AND a.attname = $2 AND NOT a.attisdropped`, table, column).Scan(&typ, &notNull)
		require.NoError(t, err, "%s.%s", table, column)
		return typ, notNull
	}
	// partitionKey returns the columns of table's partition key; nil when
	// it is not partitioned.
	partitionKey := func(table string) []string {
		return queryStrings(t, conn, `SELECT a.attname FROM pg_partitioned_table p
			CROSS JOIN LATERAL unnest(p.partattrs::int2[]) WITH ORDINALITY AS k(attnum, i)
			JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = k.attnum
			WHERE p.partrelid = $1::regclass ORDER BY k.i`, table)
	}

	var heightPartitioned []string
	for _, e := range store.DistributionPlan() {
		key := partitionKey(e.Table)
		if e.Placement != distributed {
			require.Empty(t, key, "%s: a %s table is not partitioned", e.Table, e.Placement)
			continue
		}
		typ, notNull := columnType(e.Table, e.Column)
		require.True(t, notNull, "%s.%s: a distribution column is NOT NULL", e.Table, e.Column)
		groupType, _ := columnType(e.ColocateWith, planEntryMust(t, e.ColocateWith).Column)
		require.Equal(t, groupType, typ, "%s.%s: colocated with %s", e.Table, e.Column, e.ColocateWith)
		if len(key) > 0 {
			require.Equal(t, []string{e.Column}, key, "%s: distributed by its partition key", e.Table)
			require.Equal(t, "bigint", typ, "%s.%s: a height", e.Table, e.Column)
			heightPartitioned = append(heightPartitioned, e.Table)
		}

		// The primary key and every unique index (a primary key is one)
		// include the distribution column.
		rows, err := conn.Query(ctx, `SELECT i.indexrelid::regclass::text, i.indisprimary,
				array(SELECT a.attname FROM unnest(i.indkey::int2[]) AS k(attnum)
				      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum)
			FROM pg_index i WHERE i.indrelid = $1::regclass AND i.indisunique`, e.Table)
		require.NoError(t, err)
		primary := 0
		for rows.Next() {
			var (
				name      string
				isPrimary bool
				columns   []string
			)
			require.NoError(t, rows.Scan(&name, &isPrimary, &columns))
			if isPrimary {
				primary++
			}
			require.Contains(t, columns, e.Column, "%s: unique index %s must include %s", e.Table, name, e.Column)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, 1, primary, "%s has a primary key", e.Table)
	}
	require.ElementsMatch(t, store.PartitionedTables, heightPartitioned,
		"the range-partitioned tables are the store's block-keyed tables")

	// Foreign keys (none today): Citus accepts one from a distributed table
	// to a reference table, or between two tables of one colocation group
	// over both distribution columns.
	rows, err := conn.Query(ctx, `SELECT c.conname, c.conrelid::regclass::text, c.confrelid::regclass::text,
			array(SELECT a.attname FROM unnest(c.conkey) AS k(attnum)
			      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum),
			array(SELECT a.attname FROM unnest(c.confkey) AS k(attnum)
			      JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum)
		FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid
		WHERE c.contype = 'f' AND r.relnamespace = 'public'::regnamespace AND NOT r.relispartition`)
	require.NoError(t, err)
	for rows.Next() {
		var (
			name, from, to   string
			fromCols, toCols []string
		)
		require.NoError(t, rows.Scan(&name, &from, &to, &fromCols, &toCols))
		f, t2 := planEntryMust(t, from), planEntryMust(t, to)
		switch {
		case t2.Placement == reference && f.Placement != local:
		case f.Placement == distributed && t2.Placement == distributed:
			require.Equal(t, f.ColocateWith, t2.ColocateWith, "foreign key %s joins two colocation groups", name)
			i := slices.Index(fromCols, f.Column)
			require.GreaterOrEqual(t, i, 0, "foreign key %s must include %s.%s", name, from, f.Column)
			require.Equal(t, t2.Column, toCols[i], "foreign key %s must pair the distribution columns", name)
		default:
			t.Errorf("foreign key %s from %s (%s) to %s (%s) is not one Citus accepts", name, from, f.Placement, to, t2.Placement)
		}
	}
	require.NoError(t, rows.Err())
}

func planEntryMust(t *testing.T, table string) store.Placement {
	t.Helper()
	e, ok := planEntry(table)
	require.True(t, ok, "%s is not in the distribution plan", table)
	return e
}

func queryStrings(t *testing.T, conn storetest.Querier, q string, args ...any) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), q, args...)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err, q)
	return out
}

// TestDocumentedDistributionPlanMatches: docs/database.md's "A distributed
// PostgreSQL" section gives the plan as a table (table, placement,
// distribution column, colocated with), row for row the one above, and
// an SQL block that applies it.
func TestDocumentedDistributionPlanMatches(t *testing.T) {
	t.Parallel()
	const section = "## A distributed PostgreSQL"
	rows := docs.Table(t, docsFile, section)
	require.Equal(t, []string{"table", "placement", "distribution column", "colocated with"}, rows[0])
	unquote := func(s string) string {
		if s == "" || s == "–" {
			return ""
		}
		return strings.Trim(s, "`")
	}
	var got []store.Placement
	for _, cells := range rows[1:] {
		require.Len(t, cells, 4, "%v", cells)
		got = append(got, store.Placement{Table: unquote(cells[0]), Placement: cells[1],
			Column: unquote(cells[2]), ColocateWith: unquote(cells[3])})
	}
	require.Equal(t, store.DistributionPlan(), got)

	// The SQL block distributes every table as planned, in the plan's order,
	// each group's first table starting its group.
	var want []string
	for _, e := range store.DistributionPlan() {
		switch {
		case e.Placement == reference:
			want = append(want, fmt.Sprintf("SELECT create_reference_table('%s');", e.Table))
		case e.Placement == distributed && e.ColocateWith == e.Table:
			want = append(want, fmt.Sprintf("SELECT create_distributed_table('%s', '%s', colocate_with => 'none');", e.Table, e.Column))
		case e.Placement == distributed:
			want = append(want, fmt.Sprintf("SELECT create_distributed_table('%s', '%s', colocate_with => '%s');",
				e.Table, e.Column, e.ColocateWith))
		}
	}
	blocks := docs.SQL(t, docsFile, section)
	require.Len(t, blocks, 1, "the section has one SQL block")
	block := blocks[0]
	var statements []string
	for line := range strings.SplitSeq(block, "\n") {
		if strings.HasPrefix(line, "SELECT ") {
			statements = append(statements, line)
		}
	}
	require.Equal(t, want, statements)
}
