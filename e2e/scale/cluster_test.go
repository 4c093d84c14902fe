package scale

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/e2ekit"
)

// A PostgreSQL cluster of the test's own, made with the server binaries of
// the machine's PostgreSQL installation and run as the postgres user
// (initdb refuses root). Its directory is removed and the cluster stopped
// (pg_ctl stop -m fast) when the test ends, failed or not.

// pgBinGlob is where Debian's packages (and CI's apt-installed PostgreSQL)
// put the server binaries, one directory per major version.
const pgBinGlob = "/usr/lib/postgresql/*/bin"

// postgresBin returns the bin directory of the highest PostgreSQL version
// installed that has initdb, pg_ctl and pg_basebackup; it fails the test
// when there is none.
func postgresBin(t *testing.T) string {
	t.Helper()
	dirs, err := filepath.Glob(pgBinGlob)
	if err != nil {
		t.Fatalf("glob %s: %v", pgBinGlob, err)
	}
	version := func(dir string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, dir := range dirs {
		complete := true
		for _, tool := range []string{"initdb", "pg_ctl", "pg_basebackup"} {
			if _, err := os.Stat(filepath.Join(dir, tool)); err != nil {
				complete = false
			}
		}
		if complete {
			return dir
		}
	}
	t.Fatalf("no PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) in %s: install PostgreSQL's server package "+
		"(Debian: apt-get install postgresql); this test makes a primary and a streaming replica of its own", pgBinGlob)
	return ""
}

// pgHost runs PostgreSQL server binaries as the postgres user, in a
// directory that user owns.
type pgHost struct {
	bin string // PostgreSQL's bin directory
	dir string // the test's directory, owned by postgres
	// asPostgres: the test runs as root, so the binaries run through
	// `runuser -u postgres --`; otherwise as the test's own user.
	asPostgres bool
}

// newPGHost makes the test's directory (owned by postgres when the test
// runs as root; t.TempDir is root's alone) and removes it when the test
// ends, after the clusters in it have stopped.
func newPGHost(t *testing.T) *pgHost {
	t.Helper()
	h := &pgHost{bin: postgresBin(t), asPostgres: os.Geteuid() == 0}
	dir, err := os.MkdirTemp("", "nearline-pg-")
	if err != nil {
		t.Fatalf("make cluster directory: %v", err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("remove %s: %v", dir, err)
		}
	})
	if h.asPostgres {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("the test runs as root, so PostgreSQL runs as the postgres user, which is missing: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatalf("give %s to postgres: %v", dir, err)
		}
	}
	h.dir = dir
	return h
}

// run runs one of PostgreSQL's binaries to its end and returns its output;
// it fails the test on error.
func (h *pgHost) run(t *testing.T, tool string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := filepath.Join(h.bin, tool)
	if h.asPostgres {
		args = append([]string{"-u", "postgres", "--", name}, args...)
		name = "runuser"
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = h.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// cluster is one running PostgreSQL server of the test.
type cluster struct {
	host *pgHost
	name string
	data string // data directory
	port int
}

// freePort returns a loopback port nobody listens on now. PostgreSQL
// cannot be told to pick one, so the port may be taken again before the
// server binds it; the server then fails to start, naming the port.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// primary initialises a cluster that streaming replicas can follow
// (wal_level=replica, replication connections trusted from loopback) and
// starts it.
func (h *pgHost) primary(t *testing.T, name string) *cluster {
	t.Helper()
	c := &cluster{host: h, name: name, data: filepath.Join(h.dir, name), port: freePort(t)}
	h.run(t, "initdb", "--pgdata", c.data, "--username", "postgres", "--auth", "trust", "--no-sync", "--no-instructions")
	c.appendConf(t, "postgresql.conf", fmt.Sprintf(`
listen_addresses = '127.0.0.1'
unix_socket_directories = '%s'
wal_level = replica
max_wal_senders = 4
fsync = off
`, h.dir))
	c.appendConf(t, "pg_hba.conf", "\nhost replication all 127.0.0.1/32 trust\n")
	c.start(t)
	return c
}

// replica takes a base backup of c (pg_basebackup -R -X stream: the
// standby's settings written, the WAL of the backup streamed with it) and
// starts it as a streaming replica on a port of its own.
func (c *cluster) replica(t *testing.T, name string) *cluster {
	t.Helper()
	r := &cluster{host: c.host, name: name, data: filepath.Join(c.host.dir, name), port: freePort(t)}
	c.host.run(t, "pg_basebackup", "--host", "127.0.0.1", "--port", strconv.Itoa(c.port), "--username", "postgres",
		"--pgdata", r.data, "--write-recovery-conf", "--wal-method", "stream", "--checkpoint", "fast")
	r.start(t)
	return r
}

// appendConf appends text to one of the cluster's configuration files (the
// last setting of a name wins).
func (c *cluster) appendConf(t *testing.T, file, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(c.data, file), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("open %s of %s: %v", file, c.name, err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatalf("write %s of %s: %v", file, c.name, err)
	}
}

// start starts the server on c.port and waits until it accepts
// connections; the server is stopped when the test ends.
func (c *cluster) start(t *testing.T) {
	t.Helper()
	c.appendConf(t, "postgresql.conf", fmt.Sprintf("\nport = %d\n", c.port))
	logFile := filepath.Join(c.host.dir, c.name+".log")
	c.host.run(t, "pg_ctl", "--pgdata", c.data, "--log", logFile, "--wait", "--timeout", "120", "start")
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(logFile); err == nil {
				t.Logf("PostgreSQL %s log:\n%s", c.name, e2ekit.Tail(string(b), 40))
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		name, args := filepath.Join(c.host.bin, "pg_ctl"), []string{"--pgdata", c.data, "--mode", "fast", "--wait", "stop"}
		if c.host.asPostgres {
			args = append([]string{"-u", "postgres", "--", name}, args...)
			name = "runuser"
		}
		if out, err := exec.CommandContext(ctx, name, args...).CombinedOutput(); err != nil {
			t.Logf("stop PostgreSQL %s: %v\n%s", c.name, err, out)
		}
	})
}

// url is the URL of database db on c as user.
func (c *cluster) url(user, db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", user, c.port, db)
}

// exec runs sql as the superuser on database db of c.
func (c *cluster) exec(t *testing.T, db, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.url("postgres", db))
	if err != nil {
		t.Fatalf("connect to %s: %v", c.name, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s on %s: %v", sql, c.name, err)
	}
}

// queryInt runs sql, which returns one integer, as the superuser on
// database db of c.
func (c *cluster) queryInt(t *testing.T, db, sql string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.url("postgres", db))
	if err != nil {
		t.Fatalf("connect to %s: %v", c.name, err)
	}
	defer conn.Close(context.Background())
	var n int64
	if err := conn.QueryRow(ctx, sql).Scan(&n); err != nil {
		t.Fatalf("%s on %s: %v", sql, c.name, err)
	}
	return n
}
