package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/wait"
)

// binary is the nearline binary built once for the package's tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "nearline-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "nearline")
	build := exec.Command("go", "build", "-o", binary, "../cmd/nearline")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build nearline:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// anyPort is the --listen address that lets a child process pick a free
// loopback port itself; listenAddr then reads which one it bound. (Asking
// the test for a free port and handing it over would race: the port is
// free again between the test's close and the child's bind.)
const anyPort = "127.0.0.1:0"

// listenAddr waits for p to log the address it listens on: the addr of its
// log line msg ("simulator listening", "serving JSON-RPC", "serving
// metrics").
func (p *process) listenAddr(t testing.TB, msg string) string {
	t.Helper()
	re := regexp.MustCompile(`msg="?` + regexp.QuoteMeta(msg) + `"? addr=(\S+)`)
	var addr string
	wait.For(t, time.Minute, fmt.Sprintf("nearline to log %q with its address", msg), func() bool {
		if m := re.FindStringSubmatch(p.output()); m != nil {
			addr = m[1]
			return true
		}
		return false
	})
	return addr
}

// process is a running nearline subcommand whose output is kept for the
// test log.
type process struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan error
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// start runs `nearline args...` in the background; it is killed when the
// test ends.
func start(t testing.TB, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(binary, args...), done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start nearline %v: %v", args, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("nearline %s output:\n%s", args[0], tail(p.output(), 60))
		}
	})
	return p
}

// runToEnd runs `nearline args...` and waits up to timeout for it to exit.
func runToEnd(t testing.TB, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, args...).CombinedOutput()
	return string(out), err
}

func tail(s string, lines int) string {
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

// client posts JSON-RPC requests.
type client struct {
	url  string
	http *http.Client
}

func newClient(addr string) *client {
	return &client{url: "http://" + addr, http: &http.Client{Timeout: 30 * time.Second}}
}

// envelope is a JSON-RPC response with result and error kept raw.
type envelope struct {
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// call sends one request and returns the decoded envelope.
func (c *client) call(method string, params any) (envelope, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "dontcare", "method": method, "params": params})
	if err != nil {
		return envelope{}, err
	}
	return c.post("", body)
}

func (c *client) post(path string, body []byte) (envelope, error) {
	resp, err := c.http.Post(c.url+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return envelope{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return envelope{}, err
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return envelope{}, fmt.Errorf("decode response (HTTP %d) %q: %w", resp.StatusCode, raw, err)
	}
	return env, nil
}

// waitReady polls status until the node answers or the deadline passes.
func (c *client) waitReady(t testing.TB, timeout time.Duration) {
	t.Helper()
	var env envelope
	var err error
	if !wait.Until(timeout, func() bool {
		env, err = c.call("status", map[string]any{})
		return err == nil && env.Result != nil
	}) {
		t.Fatalf("%s did not answer status within %s: %v %s", c.url, timeout, err, env.Error)
	}
}

// canonical re-encodes JSON with sorted keys, so equal documents compare
// equal as strings; numbers keep their text.
func canonical(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "invalid JSON: " + string(raw)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
