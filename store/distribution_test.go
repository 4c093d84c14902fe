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

// Placements of a table on a distributed PostgreSQL (Citus;
// docs/database.md, "A distributed PostgreSQL").
const (
	// distributed: hash-distributed by column, in the colocation group of
	// colocateWith (the group's first table names it).
	distributed = "distributed"
	// reference: one copy on every node.
	reference = "reference"
	// local: stays on the coordinator only (goose's own bookkeeping).
	local = "local"
)

// distributionEntry places one table.
type distributionEntry struct {
	table        string
	placement    string
	column       string // distributed tables: the distribution column
	colocateWith string // distributed tables: the group's first table
}

// distributionPlan places every table the migrations create: the plan
// docs/database.md's "A distributed PostgreSQL" section gives, kept here
// once. TestDistributionPlanFitsTheSchema checks it against the migrated
// schema and TestDocumentedDistributionPlanMatches against the docs.
var distributionPlan = []distributionEntry{
	// Block-keyed tables: hash-distributed by their height-range partition
	// key, all in one colocation group, so a block's rows meet on one shard.
	{"blocks", distributed, "height", "blocks"},
	{"skipped_heights", distributed, "height", "blocks"},
	{"block_chunks", distributed, "block_height", "blocks"},
	{"chunks", distributed, "block_height", "blocks"},
	{"transactions", distributed, "block_height", "blocks"},
	{"receipts", distributed, "block_height", "blocks"},
	{"execution_outcomes", distributed, "tx_block_height", "blocks"},
	{"transaction_statuses", distributed, "block_height", "blocks"},
	{"block_changes", distributed, "block_height", "blocks"},
	{"block_tx_statuses", distributed, "block_height", "blocks"},
	{"ft_events", distributed, "tx_block_height", "blocks"},
	{"nft_events", distributed, "tx_block_height", "blocks"},
	{"mt_events", distributed, "tx_block_height", "blocks"},
	// Account-keyed tables: hash-distributed by account, one group, so an
	// account's whole state and activity is on one shard.
	{"account_history", distributed, "account_id", "account_history"},
	{"access_key_history", distributed, "account_id", "account_history"},
	{"contract_data_history", distributed, "account_id", "account_history"},
	{"contract_code_history", distributed, "account_id", "account_history"},
	{"account_bases", distributed, "account_id", "account_history"},
	{"account_activity", distributed, "account_id", "account_history"},
	// Contract code: large, written once per hash, read by hash.
	{"contract_codes", distributed, "code_hash", "contract_codes"},
	// Small tables, joined with both groups.
	{"global_contract_distributions", reference, "", ""},
	{"chain_config", reference, "", ""},
	{"protocol_configs", reference, "", ""},
	{"epoch_protocol_versions", reference, "", ""},
	{"history_start", reference, "", ""},
	{"height_partitioning", reference, "", ""},
	{"indexer_cursor", reference, "", ""},
	{"goose_db_version", local, "", ""},
}

func planEntry(table string) (distributionEntry, bool) {
	for _, e := range distributionPlan {
		if e.table == table {
			return e, true
		}
	}
	return distributionEntry{}, false
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
	for _, e := range distributionPlan {
		planned = append(planned, e.table)
		switch e.placement {
		case distributed:
			require.NotEmpty(t, e.column, e.table)
			group, ok := planEntry(e.colocateWith)
			require.True(t, ok, "%s: colocated with unplanned %s", e.table, e.colocateWith)
			require.Equal(t, distributed, group.placement, "%s: colocated with %s", e.table, e.colocateWith)
			require.Equal(t, group.table, group.colocateWith, "%s: %s is not the first table of its group", e.table, group.table)
		case reference, local:
			require.Empty(t, e.column, e.table)
			require.Empty(t, e.colocateWith, e.table)
		default:
			t.Fatalf("%s: unknown placement %q", e.table, e.placement)
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
	for _, e := range distributionPlan {
		key := partitionKey(e.table)
		if e.placement != distributed {
			require.Empty(t, key, "%s: a %s table is not partitioned", e.table, e.placement)
			continue
		}
		typ, notNull := columnType(e.table, e.column)
		require.True(t, notNull, "%s.%s: a distribution column is NOT NULL", e.table, e.column)
		groupType, _ := columnType(e.colocateWith, planEntryMust(t, e.colocateWith).column)
		require.Equal(t, groupType, typ, "%s.%s: colocated with %s", e.table, e.column, e.colocateWith)
		if len(key) > 0 {
			require.Equal(t, []string{e.column}, key, "%s: distributed by its partition key", e.table)
			require.Equal(t, "bigint", typ, "%s.%s: a height", e.table, e.column)
			heightPartitioned = append(heightPartitioned, e.table)
		}

		// The primary key and every unique index (a primary key is one)
		// include the distribution column.
		rows, err := conn.Query(ctx, `SELECT i.indexrelid::regclass::text, i.indisprimary,
				array(SELECT a.attname FROM unnest(i.indkey::int2[]) AS k(attnum)
				      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum)
			FROM pg_index i WHERE i.indrelid = $1::regclass AND i.indisunique`, e.table)
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
			require.Contains(t, columns, e.column, "%s: unique index %s must include %s", e.table, name, e.column)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, 1, primary, "%s has a primary key", e.table)
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
		case t2.placement == reference && f.placement != local:
		case f.placement == distributed && t2.placement == distributed:
			require.Equal(t, f.colocateWith, t2.colocateWith, "foreign key %s joins two colocation groups", name)
			i := slices.Index(fromCols, f.column)
			require.GreaterOrEqual(t, i, 0, "foreign key %s must include %s.%s", name, from, f.column)
			require.Equal(t, t2.column, toCols[i], "foreign key %s must pair the distribution columns", name)
		default:
			t.Errorf("foreign key %s from %s (%s) to %s (%s) is not one Citus accepts", name, from, f.placement, to, t2.placement)
		}
	}
	require.NoError(t, rows.Err())
}

func planEntryMust(t *testing.T, table string) distributionEntry {
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
	var got []distributionEntry
	for _, cells := range rows[1:] {
		require.Len(t, cells, 4, "%v", cells)
		got = append(got, distributionEntry{table: unquote(cells[0]), placement: cells[1],
			column: unquote(cells[2]), colocateWith: unquote(cells[3])})
	}
	require.Equal(t, distributionPlan, got)

	// The SQL block distributes every table as planned, in the plan's order,
	// each group's first table starting its group.
	var want []string
	for _, e := range distributionPlan {
		switch {
		case e.placement == reference:
			want = append(want, fmt.Sprintf("SELECT create_reference_table('%s');", e.table))
		case e.placement == distributed && e.colocateWith == e.table:
			want = append(want, fmt.Sprintf("SELECT create_distributed_table('%s', '%s', colocate_with => 'none');", e.table, e.column))
		case e.placement == distributed:
			want = append(want, fmt.Sprintf("SELECT create_distributed_table('%s', '%s', colocate_with => '%s');",
				e.table, e.column, e.colocateWith))
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
