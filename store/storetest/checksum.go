package storetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/packed"
)

// Sum is the content of one table: its row count and the md5 of its rows
// (the columns checksummed, as a row's text) in primary-key order.
type Sum struct {
	Rows int64
	MD5  string
}

// String is the sum as a test failure prints it.
func (s Sum) String() string { return fmt.Sprintf("%d rows md5 %s", s.Rows, s.MD5) }

// Querier is what TableSums reads through: a *pgxpool.Pool, a *pgx.Conn or
// a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// bookkeeping is left out of every checksum: goose's version table and the
// cursor's wall-clock time are not chain data.
var bookkeeping = []string{"goose_db_version", "indexer_cursor.updated_at"}

// archiveRelations selects (in pg_class c) the archive's tables and views:
// the public schema's, a partitioned table as a whole, without an
// extension's own (such as Citus's citus_tables).
const archiveRelations = `c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v') AND NOT c.relispartition
	AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')`

// interned reports whether table holds accounts by number (accounts, and
// the <table>_ids tables of migration 00018): the numbers follow the order
// the accounts were first written in, which two archives of the same rows
// need not share; the views with the tables' old names give the same rows
// with names, and are summed instead.
func interned(table string) bool {
	return table == "accounts" || strings.HasSuffix(table, "_ids")
}

// TableSums checksums every table of the archive db reads: the tables of
// the public schema listed from pg_catalog, so a table a new migration
// adds is covered with no change here; a partitioned table as a whole, and
// the views that stand for tables (state_changes, actions). skip
// names more tables ("indexer_cursor") or columns ("indexer_cursor.name")
// to leave out. Two archives holding the same rows have equal sums.
func TableSums(t testing.TB, db Querier, skip ...string) map[string]Sum {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	skip = append(skip, bookkeeping...)
	rows, err := db.Query(ctx, `SELECT c.relname FROM pg_class c WHERE `+archiveRelations+` ORDER BY 1`)
	if err != nil {
		t.Fatalf("storetest: list tables: %v", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("storetest: list tables: %v", err)
	}
	tables = slices.DeleteFunc(tables, func(table string) bool { return slices.Contains(skip, table) || interned(table) })
	if len(tables) == 0 {
		t.Fatal("storetest: no table to checksum: is the database migrated?")
	}
	sums := make(map[string]Sum, len(tables))
	for _, table := range tables {
		cols, order := tableColumns(ctx, t, db, table, skip)
		q := fmt.Sprintf(`SELECT count(*), coalesce(md5(string_agg(ROW(%s)::text, E'\n' ORDER BY %s)), '') FROM %s`,
			strings.Join(cols, ", "), strings.Join(order, ", "), pgx.Identifier{table}.Sanitize())
		var s Sum
		if err := db.QueryRow(ctx, q).Scan(&s.Rows, &s.MD5); err != nil {
			t.Fatalf("storetest: checksum %s: %v", table, err)
		}
		sums[table] = s
	}
	return sums
}

// Columns returns the columns of every table and view of db's public
// schema (a partitioned table as a whole, its partitions left out), in
// their order, by table: what the migrations left, read from pg_catalog.
func Columns(t testing.TB, db Querier) map[string][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := db.Query(ctx, `SELECT c.relname::text, array_agg(a.attname::text ORDER BY a.attnum)
		FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE `+archiveRelations+` GROUP BY c.relname`)
	if err != nil {
		t.Fatalf("storetest: list columns: %v", err)
	}
	var table string
	var columns []string
	schema := map[string][]string{}
	if _, err := pgx.ForEachRow(rows, []any{&table, &columns}, func() error {
		schema[table] = columns
		return nil
	}); err != nil {
		t.Fatalf("storetest: list columns: %v", err)
	}
	if _, ok := schema["blocks"]; !ok {
		t.Fatalf("storetest: no blocks table among %d: is the database migrated?", len(schema))
	}
	return schema
}

// tableColumns returns a table's columns less those skipped, and the
// order its rows are checksummed in: its primary key, or with none the
// row's text; all quoted.
func tableColumns(ctx context.Context, t testing.TB, db Querier, table string, skip []string) (cols, order []string) {
	t.Helper()
	rows, err := db.Query(ctx, `SELECT a.attname, coalesce(a.attnum = ANY(i.indkey), false)
		FROM pg_attribute a
		LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
		WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, table)
	if err != nil {
		t.Fatalf("storetest: columns of %s: %v", table, err)
	}
	var name string
	var inKey bool
	_, err = pgx.ForEachRow(rows, []any{&name, &inKey}, func() error {
		if slices.Contains(skip, table+"."+name) {
			return nil
		}
		q := pgx.Identifier{name}.Sanitize()
		cols = append(cols, q)
		if inKey {
			order = append(order, q)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("storetest: columns of %s: %v", table, err)
	}
	if len(order) == 0 {
		// No primary key (a view: state_changes, actions): the row's text,
		// which every column type has (json has no order of its own).
		order = []string{"ROW(" + strings.Join(cols, ", ") + ")::text"}
	}
	return cols, order
}

// RequireSameSums fails the test for every table whose sum in got differs
// from want's, and for every table only one of them has.
func RequireSameSums(t testing.TB, want, got map[string]Sum) {
	t.Helper()
	for _, table := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[table]
		switch {
		case !ok:
			t.Errorf("table %s missing", table)
		case g != want[table]:
			t.Errorf("table %s differs: %s, want %s", table, g, want[table])
		}
	}
	for table := range got {
		if _, ok := want[table]; !ok {
			t.Errorf("unexpected table %s", table)
		}
	}
}

// StatusForms counts the stored transaction statuses at height by form:
// compact (their transaction or receipts kept only in the chunks that
// carry them) and as served.
func StatusForms(ctx context.Context, db Querier, height uint64) (compact, asServed int, err error) {
	var doc []byte
	if err := db.QueryRow(ctx, `SELECT statuses FROM block_tx_statuses WHERE block_height = $1`, int64(height)).Scan(&doc); err != nil {
		return 0, 0, fmt.Errorf("statuses of block %d: %w", height, err)
	}
	codec, err := packed.NewCodec()
	if err != nil {
		return 0, 0, err
	}
	values, err := codec.Unpack(doc)
	if err != nil {
		return 0, 0, fmt.Errorf("statuses of block %d: %w", height, err)
	}
	for _, v := range values {
		if len(v) > 0 && v[0] == '[' {
			compact++
		} else {
			asServed++
		}
	}
	return compact, asServed, nil
}
