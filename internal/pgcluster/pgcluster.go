// Package pgcluster runs PostgreSQL clusters of Nearline's own from the
// server binaries of the machine's PostgreSQL installation (Debian's
// /usr/lib/postgresql/<version>/bin, the highest version, or initdb on
// PATH), as the postgres user when the caller is root, since initdb refuses
// root. Two kinds:
//
//   - throwaway clusters for end-to-end tests and benchmarks (Host): a
//     primary that streaming replicas can follow, and replicas of it
//     (pg_basebackup -R -X stream), each started with pg_ctl on a loopback
//     port;
//   - a Local cluster kept in a directory across runs, on a unix socket of
//     its own: the embedded default database of the nearline commands and
//     the test server of store/storetest when no other is configured.
package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// BinGlob is where Debian's packages (and CI's apt-installed PostgreSQL)
// put the server binaries, one directory per major version.
const BinGlob = "/usr/lib/postgresql/*/bin"

// ErrNoServer is returned when no PostgreSQL server binaries are installed.
var ErrNoServer = errors.New("no PostgreSQL server binaries (initdb, pg_ctl) in " + BinGlob +
	" or on PATH: install PostgreSQL's server package (Debian, Ubuntu: apt-get install postgresql; Fedora: dnf install postgresql-server; macOS: brew install postgresql)")

// Bin returns the bin directory of the highest PostgreSQL version installed
// that has initdb, pg_ctl and pg_basebackup, or ErrNoServer.
func Bin() (string, error) { return findBin("", "initdb", "pg_ctl", "pg_basebackup") }

// findBin returns a bin directory that holds every tool: Debian's of
// version major when there is one (major "" for any), else the highest
// version's in BinGlob, else the directory of initdb on PATH.
func findBin(major string, tools ...string) (string, error) {
	dirs, err := filepath.Glob(BinGlob)
	if err != nil {
		return "", fmt.Errorf("glob %s: %w", BinGlob, err)
	}
	version := func(dir string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	if i := slices.IndexFunc(dirs, func(dir string) bool { return strconv.Itoa(version(dir)) == major }); i > 0 {
		dirs[0], dirs[i] = dirs[i], dirs[0]
	}
	if path, err := exec.LookPath("initdb"); err == nil {
		if path, err = filepath.EvalSymlinks(path); err == nil {
			dirs = append(dirs, filepath.Dir(path))
		}
	}
	for _, dir := range dirs {
		if !slices.ContainsFunc(tools, func(tool string) bool {
			_, err := os.Stat(filepath.Join(dir, tool))
			return err != nil
		}) {
			return dir, nil
		}
	}
	return "", ErrNoServer
}

// Host runs PostgreSQL server binaries in a directory of its own, which
// holds the clusters' data directories and logs.
type Host struct {
	// Bin is PostgreSQL's bin directory.
	Bin string
	// Dir is the host's directory (owned by postgres when the caller is
	// root).
	Dir string
	// asPostgres: the caller is root, so the binaries run through
	// `runuser -u postgres --`; otherwise as the caller's own user.
	asPostgres bool
}

// NewHost finds the server binaries and makes the host's directory under
// the system's temporary directory. Remove it (Host.Remove) after stopping
// its clusters.
func NewHost() (*Host, error) {
	bin, err := Bin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "nearline-pg-")
	if err != nil {
		return nil, fmt.Errorf("make cluster directory: %w", err)
	}
	h := &Host{Bin: bin, Dir: dir, asPostgres: os.Geteuid() == 0}
	if err := h.own(); err != nil {
		h.Remove()
		return nil, err
	}
	return h, nil
}

// own gives the host's directory to the postgres user when the caller is
// root (the binaries run as postgres then).
func (h *Host) own() error {
	if !h.asPostgres {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root, PostgreSQL runs as the postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(h.Dir, uid, gid); err != nil {
		return fmt.Errorf("give %s to postgres: %w", h.Dir, err)
	}
	return nil
}

// Remove deletes the host's directory.
func (h *Host) Remove() error { return os.RemoveAll(h.Dir) }

// run runs one of PostgreSQL's binaries to its end.
func (h *Host) run(ctx context.Context, tool string, args ...string) error {
	name := filepath.Join(h.Bin, tool)
	if h.asPostgres {
		args = append([]string{"-u", "postgres", "--", name}, args...)
		name = "runuser"
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = h.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", tool, strings.Join(args, " "), err, out)
	}
	return nil
}

// Cluster is one PostgreSQL server of the host.
type Cluster struct {
	host *Host
	// Name names the cluster's data directory and log in the host's.
	Name string
	// Port is the loopback port it listens on.
	Port int
}

// Data is the cluster's data directory.
func (c *Cluster) Data() string { return filepath.Join(c.host.Dir, c.Name) }

// LogFile is the server's log.
func (c *Cluster) LogFile() string { return filepath.Join(c.host.Dir, c.Name+".log") }

// URL is the URL of database db on the cluster as user (trusted: no
// password).
func (c *Cluster) URL(user, db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", user, c.Port, db)
}

// freePort returns a loopback port nobody listens on now. PostgreSQL
// cannot be told to pick one, so the port may be taken again before the
// server binds it; the server then fails to start, naming the port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Primary initialises a cluster that streaming replicas can follow
// (wal_level=replica, replication connections trusted from loopback; every
// connection is trusted, and fsync is off: a throwaway cluster) and starts
// it. Stop it when done.
func (h *Host) Primary(ctx context.Context, name string) (*Cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c := &Cluster{host: h, Name: name, Port: port}
	if err := h.run(ctx, "initdb", "--pgdata", c.Data(), "--username", "postgres", "--auth", "trust", "--no-sync", "--no-instructions"); err != nil {
		return nil, err
	}
	if err := c.appendConf("postgresql.conf", fmt.Sprintf(`
listen_addresses = '127.0.0.1'
unix_socket_directories = '%s'
wal_level = replica
max_wal_senders = 4
fsync = off
`, h.Dir)); err != nil {
		return nil, err
	}
	if err := c.appendConf("pg_hba.conf", "\nhost replication all 127.0.0.1/32 trust\n"); err != nil {
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Replica takes a base backup of c (pg_basebackup -R -X stream: the
// standby's settings written, the backup's WAL streamed with it) and
// starts it as a streaming replica of c on a port of its own. Stop it
// when done.
func (c *Cluster) Replica(ctx context.Context, name string) (*Cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &Cluster{host: c.host, Name: name, Port: port}
	if err := c.host.run(ctx, "pg_basebackup", "--host", "127.0.0.1", "--port", strconv.Itoa(c.Port), "--username", "postgres",
		"--pgdata", r.Data(), "--write-recovery-conf", "--wal-method", "stream", "--checkpoint", "fast"); err != nil {
		return nil, err
	}
	if err := r.start(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// appendConf appends text to one of the cluster's configuration files (the
// last setting of a name wins).
func (c *Cluster) appendConf(file, text string) error {
	return appendFile(filepath.Join(c.Data(), file), text)
}

// start starts the server on c.Port and waits until it accepts
// connections.
func (c *Cluster) start(ctx context.Context) error {
	if err := c.appendConf("postgresql.conf", fmt.Sprintf("\nport = %d\n", c.Port)); err != nil {
		return err
	}
	if err := c.host.run(ctx, "pg_ctl", "--pgdata", c.Data(), "--log", c.LogFile(), "--wait", "--timeout", "120", "start"); err != nil {
		return fmt.Errorf("start PostgreSQL %s: %w", c.Name, err)
	}
	return nil
}

// Stop stops the server (pg_ctl stop -m fast) and waits for it to exit; a
// server already stopped is left as it is.
func (c *Cluster) Stop(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(c.Data(), "postmaster.pid")); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := c.host.run(ctx, "pg_ctl", "--pgdata", c.Data(), "--mode", "fast", "--wait", "stop"); err != nil {
		return fmt.Errorf("stop PostgreSQL %s: %w", c.Name, err)
	}
	return nil
}
