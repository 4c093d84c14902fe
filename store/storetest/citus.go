package storetest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nearline/nearline/store"
)

// Citus reports whether the test databases are made on a Citus cluster:
// whether EnvCitusURL is set, which serverURL prefers to any other server.
func Citus() bool {
	return os.Getenv(EnvCitusURL) != ""
}

// RequireCitus stops t, saying that it did not run, unless EnvCitusURL
// points the tests at a Citus cluster.
func RequireCitus(t testing.TB) {
	t.Helper()
	if !Citus() {
		t.Skipf("%s is not set: this test needs a Citus cluster (a coordinator with its workers added) and did NOT run", EnvCitusURL)
	}
}

// createCitusDatabase makes database name on every node of the cluster
// whose coordinator admin is connected to (the workers first, each with
// the citus extension), adds the workers to it, and when migrated,
// migrates it, sets the tests' partition size and distributes it. The
// databases are dropped when t ends, the coordinator's first. A Citus
// database is not copied from a template: its metadata names its shards
// on every node.
func createCitusDatabase(ctx context.Context, t testing.TB, admin *pgx.Conn, base, name string, migrated bool) (string, error) {
	rows, err := admin.Query(ctx, `SELECT nodename, nodeport FROM pg_dist_node
		WHERE groupid <> 0 AND noderole = 'primary' AND isactive ORDER BY nodeid`)
	if err != nil {
		return "", fmt.Errorf("list the Citus workers of %s: %w", EnvCitusURL, err)
	}
	type node struct {
		Host string
		Port int
	}
	workers, err := pgx.CollectRows(rows, pgx.RowToStructByPos[node])
	if err != nil {
		return "", fmt.Errorf("list the Citus workers of %s: %w", EnvCitusURL, err)
	}
	if len(workers) == 0 {
		return "", fmt.Errorf("%s has no workers: add them with citus_add_node", EnvCitusURL)
	}
	for _, w := range workers {
		nodeURL, err := withHostPort(base, w.Host, w.Port)
		if err != nil {
			return "", err
		}
		if err := createWithCitus(ctx, t, nodeURL, name); err != nil {
			return "", fmt.Errorf("worker %s:%d: %w", w.Host, w.Port, err)
		}
	}
	if err := createWithCitus(ctx, t, base, name); err != nil {
		return "", fmt.Errorf("coordinator: %w", err)
	}
	dbURL, err := withDatabase(base, name)
	if err != nil {
		return "", err
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return "", fmt.Errorf("connect to test database: %w", err)
	}
	defer conn.Close(context.Background())
	host, port, err := hostPort(base)
	if err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, `SELECT citus_set_coordinator_host($1, $2)`, host, port); err != nil {
		return "", fmt.Errorf("set the coordinator's host: %w", err)
	}
	for _, w := range workers {
		if _, err := conn.Exec(ctx, `SELECT citus_add_node($1, $2)`, w.Host, w.Port); err != nil {
			return "", fmt.Errorf("add worker %s:%d: %w", w.Host, w.Port, err)
		}
	}
	if !migrated {
		return dbURL, nil
	}
	if err := store.Migrate(ctx, dbURL); err != nil {
		return "", fmt.Errorf("migrate test database: %w", err)
	}
	if err := setPartitionSize(ctx, dbURL); err != nil {
		return "", err
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return "", fmt.Errorf("connect to test database: %w", err)
	}
	defer pool.Close()
	if _, err := store.Distribute(ctx, pool, nil); err != nil {
		return "", fmt.Errorf("distribute test database: %w", err)
	}
	return dbURL, nil
}

// createWithCitus creates database name on the server at serverURL with
// the citus extension, dropped when t ends.
func createWithCitus(ctx context.Context, t testing.TB, serverURL, name string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		return fmt.Errorf("create test database: %w", err)
	}
	ExecAtCleanup(t, serverURL, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	dbURL, err := withDatabase(serverURL, name)
	if err != nil {
		return err
	}
	db, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect to test database: %w", err)
	}
	defer db.Close(context.Background())
	if _, err := db.Exec(ctx, `CREATE EXTENSION citus`); err != nil {
		return fmt.Errorf("create the citus extension: %w", err)
	}
	return nil
}

// withHostPort returns base with its host and port replaced.
func withHostPort(base, host string, port int) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", EnvCitusURL, err)
	}
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))
	return u.String(), nil
}

// hostPort returns the host and port of base (5432 when it names none).
func hostPort(base string) (string, int, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", 0, fmt.Errorf("parse %s: %w", EnvCitusURL, err)
	}
	port := 5432
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return "", 0, fmt.Errorf("parse %s: port %q: %w", EnvCitusURL, p, err)
		}
	}
	return u.Hostname(), port, nil
}
