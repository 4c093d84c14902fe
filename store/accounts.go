package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Account ids are interned (migration 00018): the state history, the
// activity and the token event tables hold an integer naming a row of
// accounts (id, name) instead of the account's name. A batch's rows are
// built without the database, naming each account by its name in a
// column declared as an account's (accountCol); the write that copies
// them first interns the batch's names (internAccounts) and copies the
// rows, each name written as its number (copyWriter.account).

// accountIDs are the numbers of a batch's accounts, by name.
type accountIDs map[string]int32

// accountNames returns the distinct names of the accounts tables' rows of
// rs hold by number, sorted.
func accountNames(tables []table, rs *rowSet) []string {
	seen := map[string]bool{}
	var names []string
	for _, t := range tables {
		t.of(rs).accounts(func(name string) {
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		})
	}
	slices.Sort(names)
	return names
}

// knownAccountsSQL reads the numbers of the names of $1 that have one: an
// index lookup per name.
const knownAccountsSQL = `SELECT id, name FROM accounts WHERE name = ANY($1::text[])`

// addAccountsSQL numbers the names of $1, read as having no number, and
// returns those it added. Only names without a number are given, so ids are
// not spent on names that have one (a sequence value is taken for every
// row an INSERT tries); they are inserted in name order, so two writers
// adding some of the same names wait for each other in one order and never
// deadlock. A name another writer added meanwhile is not returned (ON
// CONFLICT DO NOTHING): it is read on the next round. The missing names
// are found by a statement of their own, not a NOT EXISTS or an EXCEPT in
// this one: Citus refuses a correlated subquery beside a CTE or a set
// returning function (0A000), plans an anti-join with no task (13.0.5: it
// inserts nothing), and an EXCEPT reads the whole accounts table.
const addAccountsSQL = `
INSERT INTO accounts (name)
SELECT name FROM unnest($1::text[]) AS name
ORDER BY name
ON CONFLICT (name) DO NOTHING
RETURNING id, name`

// internAccounts returns the numbers of names (distinct, sorted),
// numbering those that have none, in tx: the numbers known are read, the
// others added, and read again when another writer added some of them
// meanwhile. A transaction interns once (a second call could wait on a
// writer that waits on it).
func internAccounts(ctx context.Context, tx pgx.Tx, names []string) (accountIDs, error) {
	ids := make(accountIDs, len(names))
	missing := names
	for attempt := 0; len(missing) > 0; attempt++ {
		if attempt == 3 {
			return nil, fmt.Errorf("intern accounts: %d names still without a number, such as %q", len(missing), missing[0])
		}
		for _, sql := range []string{knownAccountsSQL, addAccountsSQL} {
			if err := readAccountIDs(ctx, tx, sql, missing, ids); err != nil {
				return nil, err
			}
			if missing = withoutID(missing, ids); len(missing) == 0 {
				break
			}
		}
	}
	return ids, nil
}

// readAccountIDs runs sql on names and records the ids it returns.
func readAccountIDs(ctx context.Context, tx pgx.Tx, sql string, names []string, ids accountIDs) error {
	var (
		id   int32
		name string
	)
	rows, err := tx.Query(ctx, sql, names)
	if err != nil {
		return fmt.Errorf("intern accounts: %w", err)
	}
	if _, err := pgx.ForEachRow(rows, []any{&id, &name}, func() error {
		ids[name] = id
		return nil
	}); err != nil {
		return fmt.Errorf("intern accounts: %w", err)
	}
	return nil
}

// withoutID returns the names ids has no number for.
func withoutID(names []string, ids accountIDs) []string {
	var out []string
	for _, n := range names {
		if _, ok := ids[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}

// internTables interns the account names of tables' rows in rs.
func internTables(ctx context.Context, tx pgx.Tx, tables []table, rs *rowSet) (accountIDs, error) {
	return internAccounts(ctx, tx, accountNames(tables, rs))
}

// accountNumbers remembers the numbers of the accounts reads have named:
// an account's number never changes once it has one. It holds at most
// maxKnownAccounts, and starts over when full.
type accountNumbers struct {
	mu    sync.Mutex
	known map[string]int32
}

const maxKnownAccounts = 1 << 16

// noAccount is the number a read names an account that has none by: no row
// holds it (numbers start at 1), so the read finds nothing, as it would
// by name.
const noAccount int32 = -1

// accountNumber returns the number of the account named, noAccount when it
// has none. A read names the account by this number, a constant: Citus
// then sends it to the one shard that holds the account's rows, where a
// subquery on accounts would send it to every shard.
func (s *Store) accountNumber(ctx context.Context, name string) (int32, error) {
	s.numbers.mu.Lock()
	id, ok := s.numbers.known[name]
	s.numbers.mu.Unlock()
	if ok {
		return id, nil
	}
	err := s.pool.QueryRow(ctx, `SELECT id FROM accounts WHERE name = $1`, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return noAccount, nil // not remembered: it may have one later
	}
	if err != nil {
		return 0, fmt.Errorf("read the number of account %s: %w", name, err)
	}
	s.numbers.mu.Lock()
	if s.numbers.known == nil || len(s.numbers.known) >= maxKnownAccounts {
		s.numbers.known = make(map[string]int32)
	}
	s.numbers.known[name] = id
	s.numbers.mu.Unlock()
	return id, nil
}
