// Package storetest gives each test its own freshly migrated PostgreSQL
// database.
//
// The server comes from NEARLINE_TEST_DATABASE_URL when set (any database on
// it; the helper creates and drops others beside it, so the role needs
// CREATEDB). Otherwise a Postgres container is started with testcontainers-go
// once per test binary. Without Docker, a PostgreSQL cluster of the tests'
// own is made from the machine's server binaries (internal/pgcluster; the
// directory NEARLINE_PG_BIN names, or found as the nearline commands find
// them) in the system's temporary directory, nearline-storetest-<uid>, and
// started on a unix socket there; every test binary uses that one, and it
// is left running for the next (stop it with pg_ctl stop -D
// <dir>/pgdata, as the postgres user when root; remove the directory to
// start over). When none of the three works the test fails, saying how to
// provide a database: it never skips.
//
// Each test database is created from a template database migrated once per
// schema version (named nearline_tmpl_ and a hash of the migrations), so a
// test pays for a CREATE DATABASE, not for the migrations. Templates of
// schemas no checkout has any more stay on the server; drop them (and test
// databases of killed test binaries, nearline_test_*) with
//
//	psql "$NEARLINE_TEST_DATABASE_URL" -Atc "SELECT format('DROP DATABASE %I WITH (FORCE);', datname) FROM pg_database WHERE datname ~ '^nearline_(tmpl|test)_'" | psql "$NEARLINE_TEST_DATABASE_URL"
//
// while no tests run.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/retry"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/postgres"

	"github.com/nearline/nearline/internal/pgcluster"
	"github.com/nearline/nearline/migrations"
	"github.com/nearline/nearline/store"
)

// EnvURL names the variable that points the tests at a Postgres server.
const EnvURL = "NEARLINE_TEST_DATABASE_URL"

// EnvCitusURL names the variable that points the tests at the coordinator
// of a Citus cluster whose workers are added (any database of it; the
// helper creates a database of the same name on every node, with the
// citus extension, the workers added, migrated and distributed as
// store.Distribute does). When it is set, every test database is made
// there, and the tests that need a cluster run; without it they say they
// did not run.
const EnvCitusURL = "NEARLINE_TEST_CITUS_URL"

// EnvPGBin names the variable that points the local test cluster at a
// directory of PostgreSQL's server binaries.
const EnvPGBin = "NEARLINE_PG_BIN"

const howTo = "set " + EnvURL + " to a Postgres URL whose role may CREATE DATABASE " +
	"(e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable), make Docker available for testcontainers-go, " +
	"or install PostgreSQL's server package (Debian: postgresql) for a local test cluster"

// server is the process-wide Postgres the tests share: the URL from the
// environment, the one container started for this test binary, or the
// local test cluster.
var server struct {
	once  sync.Once
	url   string
	err   error
	citus bool
	local *pgcluster.Local // held (never released) while the binary runs
}

func serverURL(ctx context.Context) (string, error) {
	server.once.Do(func() {
		if u := os.Getenv(EnvCitusURL); u != "" {
			server.url, server.citus = u, true
			return
		}
		if u := os.Getenv(EnvURL); u != "" {
			server.url = u
			return
		}
		u, containerErr := containerURL(ctx)
		if containerErr == nil {
			server.url = u
			return
		}
		var localErr error
		server.local, localErr = pgcluster.OpenLocal(ctx, pgcluster.LocalConfig{
			Dir:       filepath.Join(os.TempDir(), fmt.Sprintf("nearline-storetest-%d", os.Getuid())),
			Create:    true,
			Throwaway: true,
			Bin:       os.Getenv(EnvPGBin),
		})
		if localErr != nil {
			server.err = errors.Join(containerErr, fmt.Errorf("local test cluster: %w", localErr))
			return
		}
		server.url = server.local.URL("postgres")
	})
	return server.url, server.err
}

// containerURL starts a Postgres container that lives as long as the test
// binary (testcontainers' reaper removes it afterwards).
func containerURL(ctx context.Context) (string, error) {
	ctr, err := postgres.Run(ctx, "postgres:16-alpine",
		postgres.WithDatabase("nearline"), postgres.WithUsername("postgres"), postgres.WithPassword("postgres"),
		postgres.BasicWaitStrategies())
	if err != nil {
		if ctr != nil {
			_ = testcontainers.TerminateContainer(ctr)
		}
		return "", fmt.Errorf("start postgres container: %w", err)
	}
	return ctr.ConnectionString(ctx, "sslmode=disable")
}

// withDatabase returns base with its database name replaced.
func withDatabase(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// PartitionSize is the heights per partition of every test database, far
// below the production default so that tests write across several
// partitions of every block-keyed table.
const PartitionSize = 32

// templateName is derived from the migrations' content and the partition
// size, so a schema change gets a new template.
func templateName() (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "partition size %d\n", PartitionSize)
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash migrations: %w", err)
	}
	return "nearline_tmpl_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureTemplate creates and migrates the template database unless it
// exists, under an advisory lock so parallel test binaries take turns.
func ensureTemplate(ctx context.Context, admin *pgx.Conn, base, name string) error {
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock(7146233002)`); err != nil {
		return fmt.Errorf("lock template creation: %w", err)
	}
	defer admin.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(7146233002)`)
	var exists bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("look up template: %w", err)
	}
	if exists {
		return nil
	}
	building := name + "_build"
	if _, err := admin.Exec(ctx, `DROP DATABASE IF EXISTS `+building+` WITH (FORCE)`); err != nil {
		return fmt.Errorf("drop stale template build: %w", err)
	}
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+building); err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	buildURL, err := withDatabase(base, building)
	if err != nil {
		return err
	}
	if err := store.Migrate(ctx, buildURL); err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	if err := setPartitionSize(ctx, buildURL); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, `ALTER DATABASE `+building+` RENAME TO `+name); err != nil {
		return fmt.Errorf("publish template: %w", err)
	}
	return nil
}

// NewDatabaseURL creates a fresh, migrated database for t, drops it when t
// ends, and returns its URL (to hand to the nearline binary, for example).
func NewDatabaseURL(t testing.TB) string {
	t.Helper()
	u, err := newDatabase(t)
	if err != nil {
		t.Fatalf("storetest: %v\nTo run these tests, %s.", err, howTo)
	}
	return u
}

// NewEmptyDatabaseURL is NewDatabaseURL without the migrations, for tests of
// the migrations themselves.
func NewEmptyDatabaseURL(t testing.TB) string {
	t.Helper()
	u, err := createDatabase(t, "")
	if err != nil {
		t.Fatalf("storetest: %v\nTo run these tests, %s.", err, howTo)
	}
	return u
}

func newDatabase(t testing.TB) (string, error) {
	tmpl, err := templateName()
	if err != nil {
		return "", err
	}
	return createDatabase(t, tmpl)
}

// objectInUse is PostgreSQL's object_in_use error code: CREATE DATABASE
// ... TEMPLATE while another session is connected to the template.
const objectInUse = "55006"

func createDatabase(t testing.TB, tmpl string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base, err := serverURL(ctx)
	if err != nil {
		return "", err
	}
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", fmt.Errorf("connect to test server: %w", err)
	}
	defer admin.Close(context.Background())
	name := "nearline_test_" + rand.Text()[:16]
	name = strings.ToLower(name)
	if server.citus {
		return createCitusDatabase(ctx, t, admin, base, name, tmpl != "")
	}
	create := `CREATE DATABASE ` + name
	if tmpl != "" {
		if err := ensureTemplate(ctx, admin, base, tmpl); err != nil {
			return "", err
		}
		create += ` TEMPLATE ` + tmpl
	}
	// Another session copying the same template makes CREATE DATABASE fail
	// for a moment with object_in_use; retry until the deadline.
	inUse := retry.Policy{
		Backoff: retry.Backoff{Base: 50 * time.Millisecond, Max: 50 * time.Millisecond, Jitter: retry.None},
		Retryable: func(err error) bool {
			pgErr, ok := errors.AsType[*pgconn.PgError](err)
			return ok && pgErr.Code == objectInUse
		},
	}
	err = inUse.Do(ctx, func(ctx context.Context) error {
		_, err := admin.Exec(ctx, create)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("create test database: %w", err)
	}
	ExecAtCleanup(t, base, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	return withDatabase(base, name)
}

// ExecAtCleanup runs sql on the server at url when t ends, logging (not
// failing t) when it cannot: for what a test makes on the server beside
// its database, such as a role, and for the database itself.
func ExecAtCleanup(t testing.TB, url, sql string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Logf("storetest: %s: %v", sql, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Logf("storetest: %s: %v", sql, err)
		}
	})
}

// NewStore opens a store on a fresh migrated database, closed when t ends.
func NewStore(t testing.TB) *store.Store {
	t.Helper()
	u := NewDatabaseURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := store.Open(ctx, u, store.Config{MaxConns: 4}, nil)
	if err != nil {
		t.Fatalf("storetest: open store: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// NewChainStore opens a store as NewStore does and commits to it, in one
// batch, the chain cfg describes; it returns both.
func NewChainStore(t testing.TB, cfg ChainConfig) (*store.Store, *Chain) {
	t.Helper()
	s := NewStore(t)
	c := NewChain(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Commit(ctx, c.Batch(cfg.Start, cfg.End, 0)); err != nil {
		t.Fatalf("storetest: commit the chain: %v", err)
	}
	return s, c
}

func setPartitionSize(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect to template: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE height_partitioning SET size = $1`, PartitionSize); err != nil {
		return fmt.Errorf("set template partition size: %w", err)
	}
	return nil
}

// IsSkippedHeight reports whether s recorded height as one where the chain
// produced no block (known once a later block linked over it).
func IsSkippedHeight(ctx context.Context, s *store.Store, height uint64) (bool, error) {
	var skipped bool
	err := s.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM skipped_heights WHERE height = $1)`, int64(height)).Scan(&skipped)
	if err != nil {
		return false, fmt.Errorf("read skipped height %d: %w", height, err)
	}
	return skipped, nil
}
