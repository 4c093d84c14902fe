package storetest_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

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

// TestFailsWithoutDatabase runs itself in a child process with no database
// URL and no Docker: the child must fail (not skip) and say what to do.
func TestFailsWithoutDatabase(t *testing.T) {
	if os.Getenv("STORETEST_CHILD") == "1" {
		storetest.NewDatabaseURL(t)
		return
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFailsWithoutDatabase$", "-test.v")
	cmd.Env = append(os.Environ(), "STORETEST_CHILD=1", storetest.EnvURL+"=",
		"DOCKER_HOST=unix:///nonexistent/docker.sock", "TESTCONTAINERS_RYUK_DISABLED=true")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the child test must fail:\n%s", out)
	require.Contains(t, string(out), "--- FAIL: TestFailsWithoutDatabase")
	require.Contains(t, string(out), "set "+storetest.EnvURL)
	require.NotContains(t, string(out), "SKIP")
}
