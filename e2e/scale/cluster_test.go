//go:build e2e

package scale

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/internal/pgcluster"
)

// PostgreSQL clusters of the test's own (internal/pgcluster): a primary
// and its streaming replicas, stopped (pg_ctl stop -m fast) and their
// directory removed when the test ends, failed or not.

// newPGHost makes the test's cluster directory, removed when the test ends
// (after the clusters in it have stopped: cleanups run last first). It
// fails the test when PostgreSQL's server binaries are not installed.
func newPGHost(t *testing.T) *pgcluster.Host {
	t.Helper()
	h, err := pgcluster.NewHost()
	if err != nil {
		t.Fatalf("this test makes a primary and a streaming replica of its own: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Remove(); err != nil {
			t.Logf("remove %s: %v", h.Dir, err)
		}
	})
	return h
}

// stopAtEnd stops c when the test ends, logging its log's tail if the test
// failed.
func stopAtEnd(t *testing.T, c *pgcluster.Cluster) {
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(c.LogFile()); err == nil {
				t.Logf("PostgreSQL %s log:\n%s", c.Name, e2ekit.Tail(string(b), 40))
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Log(err)
		}
	})
}

// startCluster starts the cluster name with start (a Host's Primary, one
// that streaming replicas can follow, or a Cluster's Replica, a streaming
// replica of it), giving it two minutes, and stops it when the test ends.
func startCluster(t *testing.T, start func(context.Context, string) (*pgcluster.Cluster, error), name string) *pgcluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := start(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	stopAtEnd(t, c)
	return c
}

// execSQL runs sql as the superuser on database db of c.
func execSQL(t *testing.T, c *pgcluster.Cluster, db, sql string) {
	t.Helper()
	asSuperuser(t, c, db, sql, func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, sql)
		return err
	})
}

// queryInt runs sql, which returns one integer, as the superuser on
// database db of c.
func queryInt(t *testing.T, c *pgcluster.Cluster, db, sql string) int64 {
	t.Helper()
	var n int64
	asSuperuser(t, c, db, sql, func(ctx context.Context, conn *pgx.Conn) error {
		return conn.QueryRow(ctx, sql).Scan(&n)
	})
	return n
}

// asSuperuser runs sql through run on a superuser connection to database
// db of c, within a minute, failing the test on an error.
func asSuperuser(t *testing.T, c *pgcluster.Cluster, db, sql string, run func(context.Context, *pgx.Conn) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL("postgres", db))
	if err != nil {
		t.Fatalf("connect to %s: %v", c.Name, err)
	}
	defer conn.Close(context.Background())
	if err := run(ctx, conn); err != nil {
		t.Fatalf("%s on %s: %v", sql, c.Name, err)
	}
}
