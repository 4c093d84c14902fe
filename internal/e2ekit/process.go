package e2ekit

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/logtest"
	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/store/storetest"
)

// AnyPort is the --listen address that lets a child process pick a free
// loopback port itself; Process.ListenAddr then reads which one it bound.
// (Asking the test for a free port and handing it over would race: the
// port is free again between the test's close and the child's bind.)
const AnyPort = "127.0.0.1:0"

// Binary is the path of a built nearline binary.
type Binary string

// Main is a test package's TestMain: it builds the nearline binary into a
// temporary directory, stores its path in bin, runs the tests, removes the
// directory and returns the exit code for os.Exit.
//
// It first makes sure the test server (storetest's) answers, so that a
// missing prerequisite is named before the build and any test run.
func Main(m *testing.M, bin *Binary) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	err := storetest.CheckServer(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "nearline-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "nearline")
	build := exec.Command("go", "build", "-o", path, "github.com/nearline/nearline/cmd/nearline")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build nearline:", err)
		return 1
	}
	*bin = Binary(path)
	return m.Run()
}

// Process is a running nearline subcommand whose output is kept for the
// test log.
type Process struct {
	cmd  *exec.Cmd
	out  *logtest.Buffer
	done chan error
}

// Start runs `nearline args...` in the background; it is killed when the
// test ends, and its output's tail logged if the test failed.
func (b Binary) Start(t testing.TB, args ...string) *Process {
	t.Helper()
	p := &Process{cmd: exec.Command(string(b), args...), out: &logtest.Buffer{}, done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start nearline %v: %v", args, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("nearline %s output:\n%s", args[0], Tail(p.Output(), 60))
		}
	})
	return p
}

// Run runs `nearline args...` and waits up to timeout for it to exit.
func (b Binary) Run(t testing.TB, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, string(b), args...).CombinedOutput()
	return string(out), err
}

// Output is what the process has written so far.
func (p *Process) Output() string { return p.out.String() }

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// WaitExit waits up to timeout for the process to exit; it returns the
// exit error and whether it exited in time.
func (p *Process) WaitExit(timeout time.Duration) (error, bool) {
	select {
	case err := <-p.done:
		p.done <- err // for Start's cleanup
		return err, true
	case <-time.After(timeout):
		return nil, false
	}
}

// Exited reports whether the process has exited, and how.
func (p *Process) Exited() (error, bool) {
	select {
	case err := <-p.done:
		p.done <- err
		return err, true
	default:
		return nil, false
	}
}

// ListenAddr waits for the process to log the address it listens on: the
// addr of its log line msg ("simulator listening", "serving JSON-RPC",
// "serving metrics").
func (p *Process) ListenAddr(t testing.TB, msg string) string {
	t.Helper()
	re := regexp.MustCompile(`msg="?` + regexp.QuoteMeta(msg) + `"? addr=(\S+)`)
	var addr string
	wait.For(t, time.Minute, fmt.Sprintf("nearline to log %q with its address", msg), func() bool {
		if m := re.FindStringSubmatch(p.Output()); m != nil {
			addr = m[1]
			return true
		}
		return false
	})
	return addr
}

// Tail returns the last lines of s.
func Tail(s string, lines int) string {
	var all []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		all = append(all, sc.Text())
	}
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
