package pgcluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A Local cluster lives in a directory of its own across runs:
//
//	<dir>/pgdata          the data directory, and the directory of the
//	                      server's unix socket (no TCP port is opened)
//	<dir>/postgres.log    the server's log
//	<dir>/start.lock      held while a process makes, starts or stops it
//	<dir>/users.lock      held shared by every process that uses it
//
// The first process to open it makes it (initdb) and starts the server;
// the others find it running and use it. Each process that opened it
// releases it when done, and the last one stops the server (pg_ctl stop -m
// fast): the lock files are flock(2)ed, so a process that dies releases
// them too, and the next to release stops a server left running. The
// server's own postmaster.pid keeps a second server off the same data
// directory.

// LocalPort names the unix socket of a Local cluster (.s.PGSQL.5432 in its
// data directory); nothing listens on TCP.
const LocalPort = 5432

// maxSocketPath is the longest unix socket path every supported system
// takes (sun_path is 104 bytes on macOS and the BSDs, 108 on Linux, with a
// terminating NUL).
const maxSocketPath = 103

// ErrNoCluster is returned by OpenLocal without Create when the directory
// holds no cluster.
var ErrNoCluster = errors.New("no PostgreSQL cluster in the directory")

// LocalConfig configures OpenLocal.
type LocalConfig struct {
	// Dir holds the cluster (required); made when missing.
	Dir string
	// Create makes the cluster (initdb) when Dir holds none; without it
	// OpenLocal returns ErrNoCluster then.
	Create bool
	// Database is created when missing. Default "postgres", which initdb
	// makes.
	Database string
	// Bin is the directory of PostgreSQL's initdb and pg_ctl. Default: the
	// one of the cluster's version in BinGlob, else the highest version
	// there, else the directory of initdb on PATH.
	Bin string
	// Throwaway turns fsync off, for tests: faster, and a crash of the
	// machine may lose the cluster. It applies when the cluster is made.
	Throwaway bool
}

// Local is a PostgreSQL cluster in a directory of its own, in use by this
// process until Release.
type Local struct {
	host  *Host
	users *os.File // flocked shared while this process uses the server
	// Created reports that OpenLocal made the cluster (initdb).
	Created bool
	// Started reports that OpenLocal started the server; otherwise another
	// process had started it and uses it too.
	Started bool
}

// OpenLocal makes the cluster in cfg.Dir when there is none (with
// cfg.Create), starts its server unless it is running, creates
// cfg.Database on it when missing, and marks it in use by this process.
// Release it when done.
func OpenLocal(ctx context.Context, cfg LocalConfig) (*Local, error) {
	if cfg.Dir == "" {
		return nil, errors.New("pgcluster: no directory for the local cluster")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", cfg.Dir, err)
	}
	l := &Local{host: &Host{Dir: dir, asPostgres: os.Geteuid() == 0}}
	if socket := filepath.Join(l.Data(), ".s.PGSQL."+strconv.Itoa(LocalPort)); len(socket) > maxSocketPath {
		return nil, fmt.Errorf("the PostgreSQL socket %s would be longer than the %d bytes a unix socket path may have: choose a shorter directory", socket, maxSocketPath)
	}
	if _, err := os.Stat(filepath.Join(l.Data(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) && !cfg.Create {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoCluster)
	}
	if err := makeDir(dir); err != nil {
		return nil, err
	}
	if err := l.host.own(); err != nil {
		return nil, err
	}
	if err := l.host.reachable(); err != nil {
		return nil, err
	}

	start, err := lockFile(ctx, filepath.Join(dir, "start.lock"), true)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	defer start.Close() // closing drops the lock
	major, err := l.prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if !l.Created {
		if l.host.Bin, err = localBin(cfg.Bin, major); err != nil {
			return nil, err
		}
		if err := l.start(ctx); err != nil {
			return nil, err
		}
	}
	if err := l.createDatabase(ctx, cmp.Or(cfg.Database, "postgres")); err != nil {
		return nil, err
	}
	if l.users, err = lockFile(ctx, filepath.Join(dir, "users.lock"), false); err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return l, nil
}

// Dir is the directory that holds the cluster.
func (l *Local) Dir() string { return l.host.Dir }

// Data is the cluster's data directory, which holds its socket too.
func (l *Local) Data() string { return filepath.Join(l.host.Dir, "pgdata") }

// LogFile is the server's log.
func (l *Local) LogFile() string { return filepath.Join(l.host.Dir, "postgres.log") }

// URL is the URL of database db on the cluster as the postgres superuser
// (trusted on the socket, which only the directory's owner reaches).
func (l *Local) URL(db string) string {
	q := url.Values{"host": {l.Data()}, "port": {strconv.Itoa(LocalPort)}, "sslmode": {"disable"}}
	// pgx reads "+" in a query as itself, not as a space: %20 it is.
	raw := strings.ReplaceAll(q.Encode(), "+", "%20")
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + db, RawQuery: raw}).String()
}

// prepare makes the cluster when there is none and cfg allows it (then
// starts it too: Created), and returns its PostgreSQL major version.
func (l *Local) prepare(ctx context.Context, cfg LocalConfig) (string, error) {
	version, err := os.ReadFile(filepath.Join(l.Data(), "PG_VERSION"))
	if err == nil {
		return strings.TrimSpace(string(version)), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read the cluster's version: %w", err)
	}
	if !cfg.Create {
		return "", fmt.Errorf("%s: %w", l.host.Dir, ErrNoCluster)
	}
	if l.host.Bin, err = localBin(cfg.Bin, ""); err != nil {
		return "", err
	}
	// initdb into a directory of another name, renamed once configured: a
	// cluster interrupted half-made is never taken for one.
	building := l.Data() + ".init"
	if err := os.RemoveAll(building); err != nil {
		return "", fmt.Errorf("remove a half-made cluster: %w", err)
	}
	if err := l.host.run(ctx, "initdb", "--pgdata", building, "--username", "postgres", "--auth-local", "trust", "--auth-host", "scram-sha-256",
		"--encoding", "UTF8", "--locale", "C", "--no-instructions"); err != nil {
		return "", err
	}
	conf := fmt.Sprintf("\nlisten_addresses = ''\nunix_socket_directories = '%s'\nport = %d\n", strings.ReplaceAll(l.Data(), "'", "''"), LocalPort)
	if cfg.Throwaway {
		conf += "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
	}
	if err := appendFile(filepath.Join(building, "postgresql.conf"), conf); err != nil {
		return "", err
	}
	if err := os.Rename(building, l.Data()); err != nil {
		return "", fmt.Errorf("publish the new cluster: %w", err)
	}
	l.Created = true
	if err := l.start(ctx); err != nil {
		return "", err
	}
	version, err = os.ReadFile(filepath.Join(l.Data(), "PG_VERSION"))
	if err != nil {
		return "", fmt.Errorf("read the cluster's version: %w", err)
	}
	return strings.TrimSpace(string(version)), nil
}

// start starts the server unless it is running (pg_ctl status: 0 running,
// 3 not).
func (l *Local) start(ctx context.Context) error {
	err := l.host.run(ctx, "pg_ctl", "status", "--pgdata", l.Data())
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &exit) || exit.ExitCode() != 3:
		return fmt.Errorf("check the server of %s: %w", l.host.Dir, err)
	}
	if err := l.host.run(ctx, "pg_ctl", "start", "--pgdata", l.Data(), "--log", l.LogFile(), "--wait", "--timeout", "120"); err != nil {
		log, _ := os.ReadFile(l.LogFile())
		return fmt.Errorf("start PostgreSQL in %s: %w\nits log ends:\n%s", l.host.Dir, err, tail(string(log), 10))
	}
	l.Started = true
	return nil
}

// createDatabase creates database db unless it exists.
func (l *Local) createDatabase(ctx context.Context, db string) error {
	conn, err := pgx.Connect(ctx, l.URL("postgres"))
	if err != nil {
		return fmt.Errorf("connect to the cluster in %s: %w", l.host.Dir, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, db).Scan(&exists); err != nil {
		return fmt.Errorf("look up database %s: %w", db, err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{db}.Sanitize()); err != nil {
		return fmt.Errorf("create database %s: %w", db, err)
	}
	return nil
}

// Release ends this process's use of the cluster and stops the server
// when no other process uses it (reporting whether it did). The Local is
// spent.
func (l *Local) Release(ctx context.Context) (stopped bool, err error) {
	defer l.users.Close()
	start, err := lockFile(ctx, filepath.Join(l.host.Dir, "start.lock"), true)
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", l.host.Dir, err)
	}
	defer start.Close()
	// The shared lock turns exclusive only when no other process holds
	// one; with start.lock held, none can take one meanwhile.
	if alone, err := tryLock(l.users, true); err != nil || !alone {
		return false, err
	}
	if err := l.host.run(ctx, "pg_ctl", "stop", "--pgdata", l.Data(), "--mode", "fast", "--wait"); err != nil {
		return false, fmt.Errorf("stop PostgreSQL in %s: %w", l.host.Dir, err)
	}
	return true, nil
}

// MkdirTemp makes a new directory in the system's temporary directory,
// as os.MkdirTemp does, but one the postgres user can pass (0755): a
// Local cluster's directory may go in it when the caller is root. The
// caller removes it.
func MkdirTemp(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", fmt.Errorf("make a temporary directory: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("open %s to postgres: %w", dir, err)
	}
	return dir, nil
}

// localBin returns bin when it holds initdb and pg_ctl, or without bin
// the directory findBin finds for version major.
func localBin(bin, major string) (string, error) {
	if bin == "" {
		return findBin(major, "initdb", "pg_ctl")
	}
	for _, tool := range []string{"initdb", "pg_ctl"} {
		if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
			return "", fmt.Errorf("no %s in %s, the PostgreSQL bin directory given: %w", tool, bin, err)
		}
	}
	return bin, nil
}

// localFiles are the names a Local cluster's directory holds.
var localFiles = []string{"pgdata", "pgdata.init", "postgres.log", "start.lock", "users.lock"}

// makeDir makes dir (0700; missing parents 0755, so that the postgres user
// can pass them), or checks that an existing one is empty or a Local
// cluster's: the directory is given to postgres when the caller is root.
func makeDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return fmt.Errorf("make %s: %w", filepath.Dir(dir), err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("make %s: %w", dir, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	for _, e := range entries {
		if !slices.Contains(localFiles, e.Name()) {
			return fmt.Errorf("%s holds %s, which is not a file of a PostgreSQL cluster of Nearline's: choose an empty or new directory", dir, e.Name())
		}
	}
	return nil
}

// reachable checks that the postgres user may write in the host's
// directory when the binaries run as postgres: every directory above it
// must let postgres through.
func (h *Host) reachable() error {
	if !h.asPostgres {
		return nil
	}
	if out, err := exec.Command("runuser", "-u", "postgres", "--", "test", "-w", h.Dir).CombinedOutput(); err != nil {
		return fmt.Errorf("running as root, PostgreSQL runs as the postgres user, which cannot write in %s (%v %s): choose a directory that user can reach, such as one under /var/lib or /tmp", h.Dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// tail returns the last lines of s.
func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}
