package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/pgcluster"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// loggedEnv is testEnv with the log written to stderr, where a command's
// failure is reported.
func loggedEnv(vars map[string]string) (*environment, *bytes.Buffer, *bytes.Buffer) {
	env, stdout, stderr := testEnv(vars)
	env.logger = slog.New(slog.NewTextHandler(stderr, nil))
	return env, stdout, stderr
}

// dataDir is a path for an embedded PostgreSQL in a new directory that
// the postgres user can pass when the test runs as root, removed when the
// test ends.
func dataDir(t *testing.T) string {
	t.Helper()
	parent, err := pgcluster.MkdirTemp("nearline-cmd-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(parent) })
	return filepath.Join(parent, "data")
}

func serverRunning(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "pgdata", "postmaster.pid"))
	return err == nil
}

// TestEmbeddedDatabase runs the commands without a database URL: status
// finds no archive and names the commands that make one; migrate makes the
// embedded PostgreSQL, migrates it and stops it on exit; status then
// starts it again, reads it, and leaves it running while another user
// (this test, through the same code path) holds it, whose release stops
// it.
func TestEmbeddedDatabase(t *testing.T) {
	dir := dataDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	env, _, stderr := loggedEnv(nil)
	require.Equal(t, 1, run(ctx, env, []string{"status", "--data-dir", dir}))
	require.Contains(t, stderr.String(), "no PostgreSQL cluster in the directory (nearline run, index or migrate makes one there")

	env, _, stderr = loggedEnv(nil)
	require.Equal(t, 0, run(ctx, env, []string{"migrate", "--data-dir", dir}), stderr.String())
	require.Contains(t, stderr.String(), "created=true started=true")
	require.Contains(t, stderr.String(), "embedded PostgreSQL stopped")
	require.False(t, serverRunning(dir), "the last user stops the server")

	env, _, _ = loggedEnv(map[string]string{"NEARLINE_DATA_DIR": dir})
	fs := newFlagSet(env, "test", "")
	db := registerDatabaseFlags(fs)
	require.NoError(t, env.flags().Parse(fs, nil))
	url, release, err := db.open(ctx, env, false)
	require.NoError(t, err)
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	var version int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&version))
	require.NoError(t, conn.Close(ctx))
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	require.Equal(t, latest, version, "migrate migrated the embedded database")

	env, stdout, stderr := loggedEnv(map[string]string{"NEARLINE_DATA_DIR": dir})
	require.Equal(t, 0, run(ctx, env, []string{"status"}), stderr.String())
	require.Contains(t, stdout.String(), "cursor:          none (nothing indexed yet)")
	require.Contains(t, stderr.String(), "created=false started=false")
	require.Contains(t, stderr.String(), "left running for the other nearline processes")
	require.True(t, serverRunning(dir))

	release()
	released = true
	require.False(t, serverRunning(dir))
}

// TestCommandsRefuseAnUnmigratedDatabase: status, serve and verify on a
// database without the schema say so and name `nearline migrate`, instead
// of failing on a missing table (serve before it listens).
func TestCommandsRefuseAnUnmigratedDatabase(t *testing.T) {
	t.Parallel()
	url := storetest.NewEmptyDatabaseURL(t)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"status", "--database-url", url}, 1},
		{[]string{"serve", "--database-url", url, "--listen", "127.0.0.1:0"}, 1},
		{[]string{"verify", "--database-url", url, "--against", "http://127.0.0.1:1"}, 2},
	} {
		t.Run(c.args[0], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			env, _, stderr := loggedEnv(nil)
			require.Equal(t, c.code, run(ctx, env, c.args), stderr.String())
			require.Contains(t, stderr.String(), "the database is not migrated: it holds no Nearline schema")
			require.Contains(t, stderr.String(), "run `nearline migrate` on it first")
			require.NotContains(t, stderr.String(), "serving JSON-RPC")
		})
	}
}

// TestNoMigrateRefusesASchemaBehind: index and run with --no-migrate
// (or NEARLINE_NO_MIGRATE) migrate nothing: a database without the
// schema, or one migration behind, is refused naming --no-migrate and
// `nearline migrate`, and stays as it was.
func TestNoMigrateRefusesASchemaBehind(t *testing.T) {
	t.Parallel()
	empty := storetest.NewEmptyDatabaseURL(t)
	behind := storetest.NewEmptyDatabaseURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, store.Migrate(ctx, behind))
	latest, err := store.LatestMigration()
	require.NoError(t, err)
	conn, err := pgx.Connect(ctx, behind)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, `DELETE FROM goose_db_version WHERE version_id = $1`, latest)
	require.NoError(t, err)
	for _, c := range []struct {
		cmd, url string
		vars     map[string]string
		args     []string
		want     string
	}{
		{"index", empty, nil, []string{"--no-migrate"}, "it holds no Nearline schema"},
		{"run", empty, map[string]string{"NEARLINE_NO_MIGRATE": "true"}, nil, "it holds no Nearline schema"},
		{"index", behind, nil, []string{"--no-migrate"}, fmt.Sprintf("its schema is at version %d, this binary's at %d", latest-1, latest)},
	} {
		env, _, stderr := loggedEnv(c.vars)
		args := append([]string{c.cmd, "--database-url", c.url, "--upstream", "http://127.0.0.1:1"}, c.args...)
		if c.cmd == "run" {
			args = append(args, "--listen", "127.0.0.1:0")
		}
		require.Equal(t, 1, run(ctx, env, args), stderr.String())
		require.Contains(t, stderr.String(), "--no-migrate: the database is not migrated: "+c.want)
		require.Contains(t, stderr.String(), "run `nearline migrate` on it first (docs/database.md), or leave out --no-migrate")
	}
	require.Zero(t, tableCount(t, empty), "nothing migrated")
	var applied int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&applied))
	require.Equal(t, latest-1, applied, "nothing migrated")
}

// TestEmbeddedDatabaseNotMigrated: an embedded PostgreSQL that holds no
// schema yet is refused by status the same way.
func TestEmbeddedDatabaseNotMigrated(t *testing.T) {
	dir := dataDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, err := pgcluster.OpenLocal(ctx, pgcluster.LocalConfig{Dir: dir, Create: true, Database: pgcluster.EmbeddedDatabase, Throwaway: true})
	require.NoError(t, err)
	_, err = l.Release(ctx)
	require.NoError(t, err)

	env, _, stderr := loggedEnv(nil)
	require.Equal(t, 1, run(ctx, env, []string{"status", "--data-dir", dir}), stderr.String())
	require.Contains(t, stderr.String(), "run `nearline migrate` on it first")
	require.False(t, serverRunning(dir))
}

// TestDatabaseFlagsRefusals: embedded-database flags beside a URL are
// refused before anything starts; so is a data directory PostgreSQL's
// binaries cannot be found for.
func TestDatabaseFlagsRefusals(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"status", "migrate", "serve"} {
		env, _, stderr := loggedEnv(map[string]string{"NEARLINE_DATA_DIR": "/tmp/x"})
		require.Equal(t, 2, run(context.Background(), env, []string{cmd, "--database-url", "postgres://127.0.0.1:1/x"}), cmd)
		require.Contains(t, stderr.String(), "--data-dir and --pg-bin (NEARLINE_DATA_DIR, NEARLINE_PG_BIN) are for the embedded PostgreSQL")
	}
	env, _, stderr := loggedEnv(nil)
	require.Equal(t, 1, run(context.Background(), env, []string{"migrate", "--data-dir", dataDir(t), "--pg-bin", "/nonexistent"}))
	require.Contains(t, stderr.String(), "no --database-url, and the embedded PostgreSQL in")
	require.Contains(t, stderr.String(), "no initdb in /nonexistent")
}

// TestVerifyReversedRangeInOneLine: --from above --to is one line and exit
// status 2, before anything connects.
func TestVerifyReversedRangeInOneLine(t *testing.T) {
	t.Parallel()
	env, stdout, stderr := testEnv(nil)
	code := run(context.Background(), env, []string{"verify", "--database-url", "postgres://127.0.0.1:1/x", "--against", "http://127.0.0.1:1", "--from", "500", "--to", "100"})
	require.Equal(t, 2, code)
	require.Empty(t, stdout.String())
	require.Equal(t, "nearline verify: --from 500 is above --to 100\n", stderr.String())
	require.False(t, strings.Contains(stderr.String(), "Usage"))
}
