package store_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/docs"
	"github.com/nearline/nearline/store/storetest"
)

// docsFile holds the SQL a reader is shown that these tests run.
const docsFile = "docs/database.md"

// exampleQueries returns the SQL blocks of docs/database.md's "Example
// queries".
func exampleQueries(t *testing.T) []string { return docs.SQL(t, docsFile, "## Example queries") }

// TestExampleQueriesRunOnTheSchema: every example query docs/database.md
// gives analysts runs on an archive of the current schema, holding blocks
// over several partitions.
func TestExampleQueriesRunOnTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 2*storetest.PartitionSize + 10})
	queries := exampleQueries(t)
	require.GreaterOrEqual(t, len(queries), 8)
	for _, q := range queries {
		err := pgx.BeginFunc(ctx, s.Pool(), func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, q)
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		})
		if refusedOnCitus(t, err, q) {
			continue
		}
		require.NoError(t, err, q)
	}
}

// refusedOnCitus reports whether err is Citus refusing query q as a join
// of two colocation groups or a subquery it cannot push down (SQLSTATE
// 0A000, feature not supported), which docs/database.md says of the
// analysts' queries on a cluster; it logs which.
func refusedOnCitus(t *testing.T, err error, q string) bool {
	t.Helper()
	var pgErr *pgconn.PgError
	if !storetest.Citus() || !errors.As(err, &pgErr) || pgErr.Code != "0A000" {
		return false
	}
	t.Logf("refused on Citus (%s): %s", pgErr.Message, strings.SplitN(strings.TrimSpace(q), "\n", 2)[0])
	return true
}

// TestExplorerQueriesAnswer: docs/database.md's explorer queries run on an
// archive whose blocks carry token events (ft.near sends bob 5 tokens a
// block; nft.near mints bob a token a block and moves the previous one to
// carol), each returns rows, and the balance and holders they give are
// right.
func TestExplorerQueriesAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	end := uint64(2*storetest.PartitionSize + 10)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: end})
	var batch []bundle.Bundle
	for h := uint64(1); h <= end; h++ {
		b, ok := c.Bundle(h)
		require.True(t, ok)
		nft := []string{fmt.Sprintf(`EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_mint","data":[{"owner_id":"bob.near","token_ids":["t%03d"]}]}`, h)}
		if h > 1 {
			nft = append(nft, fmt.Sprintf(`EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_transfer","data":[{"old_owner_id":"bob.near","new_owner_id":"carol.near","token_ids":["t%03d"]}]}`, h-1))
		}
		addOutcomes(t, &b, h,
			outcomeSpec{executor: "ft.near", logs: []string{`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_transfer","data":[{"old_owner_id":"alice.near","new_owner_id":"bob.near","amount":"5"}]}`}},
			outcomeSpec{executor: "nft.near", logs: nft})
		batch = append(batch, b)
	}
	_, err := s.Commit(ctx, batch[:end/2])
	require.NoError(t, err)
	_, err = s.Commit(ctx, batch[end/2:])
	require.NoError(t, err)

	queries := docs.SQL(t, docsFile, "## Explorer queries")
	require.Len(t, queries, 5)
	results := make([][][]any, len(queries))
	refused := make([]bool, len(queries))
	for i, q := range queries {
		rows, err := s.Pool().Query(ctx, q)
		if err == nil {
			for rows.Next() {
				v, err := rows.Values()
				require.NoError(t, err)
				results[i] = append(results[i], v)
			}
			err = rows.Err()
		}
		if refused[i] = refusedOnCitus(t, err, q); refused[i] {
			continue
		}
		require.NoError(t, err, q)
		require.NotEmpty(t, results[i], q)
	}
	// Balance history: bob's newest balance is 5 per block.
	if !refused[2] {
		balance := results[2][0][4].(pgtype.Numeric)
		require.Equal(t, int64(5*end), balance.Int.Int64()*pow10(balance.Exp))
	}
	// Holders: every token but the last went to carol.
	if !refused[3] {
		require.Len(t, results[3], 50)
	}
	if !refused[4] {
		require.Equal(t, []any{"carol.near", int64(end - 1)}, results[4][0])
		require.Equal(t, []any{"bob.near", int64(1)}, results[4][1])
	}
}

// TestDatabaseDocDescribesEveryTable: docs/database.md describes every
// table of the migrated schema and every column of each, so a migration
// that adds a table or a column fails here until the doc says what it
// holds. The tables are the public schema's ordinary and partitioned
// tables (not their partitions, which the indexer creates per range) and
// its views (actions, state_changes: the doc describes them as tables),
// less goose's goose_db_version.
//
// The doc describes a table in entries, each a line that names it first
// (a row of a Markdown table, | `blocks` | ..., or an item, - **`blocks`**:
// ...) with the indented lines that continue it. Every column must be
// named, in backquotes, in one of its table's entries or in the entries of
// a table it is described "as" (nft_events: as `ft_events`, with ...).
func TestDatabaseDocDescribesEveryTable(t *testing.T) {
	t.Parallel()
	schema := migratedSchema(t)
	entries := tableEntries(docs.Read(t, docsFile))
	var missing []string
	for _, table := range slices.Sorted(maps.Keys(schema)) {
		text, ok := describedAs(entries, table, map[string]bool{})
		if !ok {
			missing = append(missing, fmt.Sprintf("table %s (no row | `%s` | ... and no item - **`%s`**: ...)", table, table, table))
			continue
		}
		for _, column := range schema[table] {
			if !strings.Contains(text, "`"+column+"`") {
				missing = append(missing, fmt.Sprintf("column %s.%s", table, column))
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s does not describe, as the migrations leave the schema:\n\t%s", docsFile, strings.Join(missing, "\n\t"))
	}
}

// migratedSchema returns the columns of every table and view the
// migrations leave (partitions and goose's own table left out), by name.
func migratedSchema(t *testing.T) map[string][]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, storetest.NewDatabaseURL(t))
	require.NoError(t, err)
	defer conn.Close(ctx)
	schema := storetest.Columns(t, conn)
	delete(schema, "goose_db_version")
	return schema
}

var columnMention = regexp.MustCompile("`([a-z0-9_]+)\\.([a-z0-9_]+)`")

// TestDocsNameColumnsThatExist: a `table.column` that README.md or a
// document of docs/ names, for a table or view of the schema, is one of
// its columns: a column a migration dropped or renamed is not left in the
// docs. docs/database-storage.md, which tells what layout 3 dropped, is left
// out.
func TestDocsNameColumnsThatExist(t *testing.T) {
	t.Parallel()
	schema := migratedSchema(t)
	var named int
	for _, file := range docs.Files(t) {
		if file == "docs/database-storage.md" {
			continue
		}
		for _, m := range columnMention.FindAllStringSubmatch(docs.Read(t, file), -1) {
			columns, ok := schema[m[1]]
			if !ok {
				continue // not a table: ft.near, header.congestion_info
			}
			named++
			require.Contains(t, columns, m[2], "%s names %s, which %s does not have", file, m[0], m[1])
		}
	}
	require.Greater(t, named, 10, "column mentions found: the pattern may have stopped matching")
}

var (
	// entryStart matches a line that starts an entry of a table: a
	// Markdown table row or a list item whose first word is its name.
	entryStart = regexp.MustCompile("^(?:\\| |- \\*\\*)`([a-z0-9_]+)`")
	// describedAsRef matches a reference to another table's entries.
	describedAsRef = regexp.MustCompile("\\bas `([a-z0-9_]+)`")
)

// tableEntries returns the entries of text by the table they name: each
// an entryStart line with the indented lines after it.
func tableEntries(text string) map[string][]string {
	entries := map[string][]string{}
	current := ""
	for _, line := range strings.Split(text, "\n") {
		if m := entryStart.FindStringSubmatch(line); m != nil {
			current = m[1]
			entries[current] = append(entries[current], line)
			continue
		}
		if current != "" && strings.HasPrefix(line, " ") && strings.TrimSpace(line) != "" {
			last := len(entries[current]) - 1
			entries[current][last] += "\n" + line
			continue
		}
		current = ""
	}
	return entries
}

// describedAs returns the text of table's entries and of the entries of
// the tables they describe it "as", and whether table has any.
func describedAs(entries map[string][]string, table string, seen map[string]bool) (string, bool) {
	if seen[table] || len(entries[table]) == 0 {
		return "", false
	}
	seen[table] = true
	text := strings.Join(entries[table], "\n")
	for _, m := range describedAsRef.FindAllStringSubmatch(text, -1) {
		if more, ok := describedAs(entries, m[1], seen); ok {
			text += "\n" + more
		}
	}
	return text, true
}

func pow10(exp int32) int64 {
	out := int64(1)
	for range exp {
		out *= 10
	}
	return out
}
