package storetest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

func TestDatabasesAreFreshAndIsolated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := storetest.NewDatabaseURL(t), storetest.NewDatabaseURL(t)
	require.NotEqual(t, a, b)
	connA, err := pgx.Connect(ctx, a)
	require.NoError(t, err)
	defer connA.Close(ctx)
	connB, err := pgx.Connect(ctx, b)
	require.NoError(t, err)
	defer connB.Close(ctx)
	_, err = connA.Exec(ctx, `INSERT INTO indexer_cursor (name, first_height, height, hash) VALUES ('main', 0, 5, 'x')`)
	require.NoError(t, err)
	var n int
	require.NoError(t, connB.QueryRow(ctx, `SELECT count(*) FROM indexer_cursor`).Scan(&n))
	require.Zero(t, n, "a write in one test's database is not seen in another's")
	require.NoError(t, connB.QueryRow(ctx, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`).Scan(&n))
	require.Positive(t, n, "databases are migrated")
}

// runChild runs the test name of this binary in a child process with no
// database URL, no Docker and the variables extra, and returns its output.
func runChild(t *testing.T, name string, extra ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(append(os.Environ(), "STORETEST_CHILD=1", storetest.EnvURL+"=",
		"DOCKER_HOST=unix:///nonexistent/docker.sock", "TESTCONTAINERS_RYUK_DISABLED=true"), extra...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestFailsWithoutDatabase runs itself in a child process with no database
// URL, no Docker and no PostgreSQL binaries: the child must fail (not skip)
// and say what to do.
func TestFailsWithoutDatabase(t *testing.T) {
	if os.Getenv("STORETEST_CHILD") == "1" {
		storetest.NewDatabaseURL(t)
		return
	}
	t.Parallel()
	out, err := runChild(t, "TestFailsWithoutDatabase", storetest.EnvPGBin+"=/nonexistent")
	require.Error(t, err, "the child test must fail:\n%s", out)
	require.Contains(t, out, "--- FAIL: TestFailsWithoutDatabase")
	require.Contains(t, out, "set "+storetest.EnvURL)
	require.Contains(t, out, "no initdb in /nonexistent")
	require.Contains(t, out, "(Debian: postgresql)")
	require.NotContains(t, out, "SKIP")
}

// TestLocalClusterWithoutURLOrDocker runs itself in a child process with
// no database URL and no Docker: the child gets a migrated database on the
// local test cluster (a unix socket in the temporary directory) and reads
// it through the store.
func TestLocalClusterWithoutURLOrDocker(t *testing.T) {
	if os.Getenv("STORETEST_CHILD") == "1" {
		u := storetest.NewDatabaseURL(t)
		require.Contains(t, u, "host=%2F", "a unix socket directory")
		require.Contains(t, u, "nearline-storetest-")
		ctx := context.Background()
		s, err := store.Open(ctx, u, store.Config{MaxConns: 2}, nil)
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, s.CheckSchema(ctx))
		status, err := s.Status(ctx)
		require.NoError(t, err)
		require.False(t, status.HasCursor, "a fresh database")
		return
	}
	t.Parallel()
	out, err := runChild(t, "TestLocalClusterWithoutURLOrDocker")
	require.NoError(t, err, "the child test must pass on the local test cluster:\n%s", out)
	require.Contains(t, out, "--- PASS: TestLocalClusterWithoutURLOrDocker")
}

// TestBatchFillsSkippedAndKeepsEdits: a batch's blocks name the heights
// without a block since the block before (prev), or since lo when prev is
// 0, and carry what Edit changed; the chain's own blocks stay as built.
func TestBatchFillsSkippedAndKeepsEdits(t *testing.T) {
	t.Parallel()
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 9, Skipped: map[uint64]bool{3: true, 6: true, 7: true},
		Edit: func(b *bundle.Bundle) { b.Block.Author = fmt.Sprint("edited-", b.Height()) }})
	var heights []uint64
	var skipped [][]uint64
	for _, b := range c.Batch(4, 9, 2) {
		heights = append(heights, b.Height())
		skipped = append(skipped, b.Skipped)
		require.Equal(t, fmt.Sprint("edited-", b.Height()), b.Block.Author)
	}
	require.Equal(t, []uint64{4, 5, 8, 9}, heights)
	require.Equal(t, [][]uint64{{3}, nil, {6, 7}, nil}, skipped)
	require.Equal(t, []uint64{6, 7}, c.Batch(6, 9, 0)[0].Skipped, "a range's first block names the heights from lo")
	b, ok := c.Bundle(4)
	require.True(t, ok)
	require.Nil(t, b.Skipped)
}
