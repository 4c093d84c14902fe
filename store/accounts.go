package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Account ids are interned (migration 00018): the state history, the
// activity and the token event tables hold an integer naming a row of
// accounts (id, name) instead of the account's name. A batch's rows are
// built without the database, naming each account by an accountName; the
// write that copies them first interns the batch's names (internAccounts,
// one statement) and copies each row with its names replaced by their ids
// (accountIDs.rows).

// accountName is an account id, in a row of a table whose account columns
// hold integers: the write replaces it by the account's number.
type accountName string

// optAccount is an optional account column: NULL, or the account's name.
func optAccount(name *string) any {
	if name == nil {
		return nil
	}
	return accountName(*name)
}

// accountIDs are the numbers of a batch's accounts, by name.
type accountIDs map[string]int32

// rows returns t's rows with every accountName replaced by its number; the
// rows of a table without account columns as they are. The rows given are
// left as they were (a failed write is retried with them).
func (ids accountIDs) rows(t table, rows [][]any) [][]any {
	if !t.named || len(rows) == 0 {
		return rows
	}
	out := make([][]any, len(rows))
	for i, row := range rows {
		r := slices.Clone(row)
		for j, v := range r {
			if name, ok := v.(accountName); ok {
				r[j] = ids[string(name)]
			}
		}
		out[i] = r
	}
	return out
}

// accountNames returns the distinct names of the rows, sorted.
func accountNames(tables []table, rs *rowSet) []string {
	seen := map[string]bool{}
	var names []string
	for _, t := range tables {
		if !t.named {
			continue
		}
		for _, row := range t.rows(rs) {
			for _, v := range row {
				if name, ok := v.(accountName); ok && !seen[string(name)] {
					seen[string(name)] = true
					names = append(names, string(name))
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// internSQL numbers the accounts of $1 (distinct, sorted) that have no
// number yet and returns every one's. Only the names missing are inserted,
// so ids are not spent on names that have one (a sequence value is taken
// for every row an INSERT tries); they are inserted in name order, so two
// writers adding some of the same names wait for each other in one order
// and never deadlock. The added rows are not in the statement's snapshot:
// they come from RETURNING. A name another writer added after the
// snapshot (ON CONFLICT DO NOTHING returns nothing for it) is missing from
// the answer: internAccounts asks again. The names missing are an EXCEPT,
// not a correlated NOT EXISTS, which Citus refuses over a CTE (0A000), nor
// an anti-join (LEFT JOIN ... WHERE a.id IS NULL), which Citus 13.0.5
// plans with no task and so inserts nothing.
const internSQL = `
WITH wanted AS (SELECT name FROM unnest($1::text[]) AS name),
added AS (
    INSERT INTO accounts (name)
    SELECT n.name FROM (SELECT name FROM wanted EXCEPT SELECT name FROM accounts) n
    ORDER BY n.name
    ON CONFLICT (name) DO NOTHING
    RETURNING id, name)
SELECT a.id, a.name FROM accounts a JOIN wanted w ON w.name = a.name
UNION ALL
SELECT id, name FROM added`

// internAccounts returns the numbers of names (distinct, sorted),
// numbering those that have none, in tx: one statement, a second when
// another writer added some of them meanwhile. A transaction interns once
// (a second call could wait on a writer that waits on it).
func internAccounts(ctx context.Context, tx pgx.Tx, names []string) (accountIDs, error) {
	ids := make(accountIDs, len(names))
	if len(names) == 0 {
		return ids, nil
	}
	missing := names
	for attempt := 0; len(missing) > 0; attempt++ {
		if attempt == 3 {
			return nil, fmt.Errorf("intern accounts: %d names still without a number, such as %q", len(missing), missing[0])
		}
		var (
			id   int32
			name string
		)
		rows, err := tx.Query(ctx, internSQL, missing)
		if err != nil {
			return nil, fmt.Errorf("intern accounts: %w", err)
		}
		if _, err := pgx.ForEachRow(rows, []any{&id, &name}, func() error {
			ids[name] = id
			return nil
		}); err != nil {
			return nil, fmt.Errorf("intern accounts: %w", err)
		}
		next := missing[:0:0]
		for _, n := range missing {
			if _, ok := ids[n]; !ok {
				next = append(next, n)
			}
		}
		missing = next
	}
	return ids, nil
}

// internTables interns the account names of tables' rows in rs.
func internTables(ctx context.Context, tx pgx.Tx, tables []table, rs *rowSet) (accountIDs, error) {
	return internAccounts(ctx, tx, accountNames(tables, rs))
}
