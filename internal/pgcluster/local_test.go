package pgcluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// localDir is a new directory that the postgres user can pass when the
// test runs as root (unlike t.TempDir's parent), removed when the test
// ends.
func localDir(t *testing.T) string {
	t.Helper()
	dir, err := MkdirTemp("nearline-local-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func selectOne(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var one int
	require.NoError(t, conn.QueryRow(ctx, `SELECT 1`).Scan(&one))
}

// TestLocalClusterIsSharedAndStoppedByItsLastUser opens the cluster of one
// directory twice, as two processes would (flock locks belong to the open
// file, so two opens in one process hold two locks): the first makes and
// starts it, the second uses the running server, releasing the first
// leaves it running for the second, and the last release stops it. A
// later open without Create starts it again, with its database kept.
func TestLocalClusterIsSharedAndStoppedByItsLastUser(t *testing.T) {
	if _, err := findBin("", "initdb", "pg_ctl"); err != nil {
		t.Fatalf("this test makes a cluster of its own: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := filepath.Join(localDir(t), "data")

	_, err := OpenLocal(ctx, LocalConfig{Dir: dir})
	require.ErrorIs(t, err, ErrNoCluster, "without Create, an empty directory is refused")

	first, err := OpenLocal(ctx, LocalConfig{Dir: dir, Create: true, Database: "nearline", Throwaway: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = first.host.run(context.Background(), "pg_ctl", "stop", "--pgdata", first.Data(), "--mode", "immediate")
	})
	require.True(t, first.Created)
	require.True(t, first.Started)
	selectOne(t, ctx, first.URL("nearline"))

	second, err := OpenLocal(ctx, LocalConfig{Dir: dir, Create: true, Database: "nearline"})
	require.NoError(t, err)
	require.False(t, second.Created)
	require.False(t, second.Started, "the second user finds the server running")

	stopped, err := first.Release(ctx)
	require.NoError(t, err)
	require.False(t, stopped, "another user holds the cluster")
	selectOne(t, ctx, second.URL("nearline"))

	stopped, err = second.Release(ctx)
	require.NoError(t, err)
	require.True(t, stopped, "the last user stops the server")
	_, err = os.Stat(filepath.Join(second.Data(), "postmaster.pid"))
	require.ErrorIs(t, err, os.ErrNotExist)

	again, err := OpenLocal(ctx, LocalConfig{Dir: dir})
	require.NoError(t, err)
	require.False(t, again.Created)
	require.True(t, again.Started)
	selectOne(t, ctx, again.URL("nearline"))
	stopped, err = again.Release(ctx)
	require.NoError(t, err)
	require.True(t, stopped)
}

// TestLocalClusterRefusesAForeignDirectory: a directory holding other
// files is not taken over (as root, it would be given to postgres).
func TestLocalClusterRefusesAForeignDirectory(t *testing.T) {
	t.Parallel()
	dir := localDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600))
	_, err := OpenLocal(context.Background(), LocalConfig{Dir: dir, Create: true})
	require.ErrorContains(t, err, "notes.txt, which is not a file of a PostgreSQL cluster")
	_, err = os.Stat(filepath.Join(dir, "pgdata"))
	require.True(t, errors.Is(err, os.ErrNotExist))
}

// TestLocalClusterRefusesALongSocketPath: a unix socket path has a length
// limit; the error says so instead of the server failing to start.
func TestLocalClusterRefusesALongSocketPath(t *testing.T) {
	t.Parallel()
	dir := localDir(t)
	for len(dir) < maxSocketPath {
		dir = filepath.Join(dir, "deeper")
	}
	_, err := OpenLocal(context.Background(), LocalConfig{Dir: dir, Create: true})
	require.ErrorContains(t, err, "longer than the 103 bytes a unix socket path may have")
}

// TestLocalURL: the URL names the socket directory and port, so that
// PGHOST or PGPORT in the environment change nothing.
func TestLocalURL(t *testing.T) {
	l := &Local{host: &Host{Dir: "/var/lib/near line"}}
	require.Equal(t, "postgres://postgres@/nearline?host=%2Fvar%2Flib%2Fnear%20line%2Fpgdata&port=5432&sslmode=disable", l.URL("nearline"))
	t.Setenv("PGHOST", "/nowhere")
	t.Setenv("PGPORT", "1")
	cfg, err := pgx.ParseConfig(l.URL("nearline"))
	require.NoError(t, err)
	require.Equal(t, "/var/lib/near line/pgdata", cfg.Host)
	require.EqualValues(t, 5432, cfg.Port)
	require.Equal(t, "nearline", cfg.Database)
}
