package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/migrations"

	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// migrateCLI runs nearline commands against the database at url, requiring
// their exit status, and the lines `migrate status` prints.
type migrateCLI struct {
	t      *testing.T
	ctx    context.Context
	url    string
	latest int64
}

func newMigrateCLI(t *testing.T) migrateCLI {
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return migrateCLI{t: t, ctx: ctx, url: storetest.NewEmptyDatabaseURL(t), latest: latest}
}

func (m migrateCLI) run(code int, args ...string) string {
	m.t.Helper()
	env, stdout, stderr := loggedEnv(nil)
	require.Equal(m.t, code, run(m.ctx, env, append(args, "--database-url", m.url)), "%v: %s", args, stderr)
	return stdout.String() + stderr.String()
}

func (m migrateCLI) status() []string {
	m.t.Helper()
	return strings.Split(strings.TrimSuffix(m.run(0, "migrate", "status"), "\n"), "\n")
}

// TestMigrateStatus: every migration is pending on an empty database
// (which status leaves as it is) and applied, with its time, after
// migrate; those without a down migration say so.
func TestMigrateStatus(t *testing.T) {
	t.Parallel()
	m := newMigrateCLI(t)
	lines := m.status()
	require.Len(t, lines, int(m.latest)+1)
	require.Equal(t, "    1  pending               00001_init.sql", lines[0])
	require.Equal(t, fmt.Sprintf("0 applied, %d pending: nearline migrate applies them", m.latest), lines[m.latest])
	require.Zero(t, tableCount(t, m.url), "status changes nothing")

	m.run(0, "migrate")
	lines = m.status()
	require.Regexp(t, `^    1  20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ  00001_init.sql$`, lines[0])
	require.Contains(t, lines[10], "00011_layout3.sql (no down migration: layout 3 cannot be migrated down")
	require.Equal(t, fmt.Sprintf("%d applied, 0 pending", m.latest), lines[m.latest])
}

// TestMigrateDown: migrate down --to undoes the newest migrations, which
// status then lists as pending and migrate applies again; a --to below a
// migration without a down migration is refused before anything is
// undone, naming the oldest such; --to is required.
func TestMigrateDown(t *testing.T) {
	t.Parallel()
	m := newMigrateCLI(t)
	// 00017 has no down migration: the archive goes up to 16 first.
	const reversible = 16
	upTo(t, m.url, reversible)
	out := m.run(0, "migrate", "down", "--to", fmt.Sprint(reversible-1))
	require.Contains(t, out, fmt.Sprintf(`msg="migration undone" version=%d`, reversible))
	lines := m.status()
	require.Contains(t, lines[reversible-1], "pending")
	require.Equal(t, fmt.Sprintf("%d applied, %d pending: nearline migrate applies them", reversible-1, m.latest-reversible+1), lines[m.latest])

	m.run(0, "migrate")
	out = m.run(1, "migrate", "down", "--to", fmt.Sprint(reversible)) // below 00017 (00018 has a down migration)
	require.Contains(t, out, "migration 00017_outcomes_by_place.sql cannot be migrated down: layout 4 cannot be migrated down")
	out = m.run(1, "migrate", "down", "--to", "10")
	require.Contains(t, out, "migration 00011_layout3.sql cannot be migrated down: layout 3 cannot be migrated down")
	require.Contains(t, m.status()[m.latest], fmt.Sprintf("%d applied, 0 pending", m.latest), "nothing undone")

	require.Contains(t, m.run(2, "migrate", "down"), "--to (or NEARLINE_MIGRATE_DOWN_TO) is required")
}

// upTo applies the embedded migrations to the database at url up to
// version.
func upTo(t *testing.T, url string, version int64) {
	t.Helper()
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer db.Close()
	provider, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = provider.UpTo(context.Background(), version)
	require.NoError(t, err)
}
