package e2ekit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/wait"
)

// Client posts JSON-RPC requests.
type Client struct {
	// URL is the node's base URL, http://ADDR.
	URL  string
	http *http.Client
}

// NewClient returns a client of the node at addr (host:port).
func NewClient(addr string) *Client {
	return &Client{URL: "http://" + addr, http: &http.Client{Timeout: 30 * time.Second}}
}

// Envelope is a JSON-RPC response with result and error kept raw.
type Envelope struct {
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// Call sends one request and returns the decoded envelope.
func (c *Client) Call(method string, params any) (Envelope, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "dontcare", "method": method, "params": params})
	if err != nil {
		return Envelope{}, err
	}
	return c.Post("", body)
}

// Post sends body to the node's path and decodes the envelope answered.
func (c *Client) Post(path string, body []byte) (Envelope, error) {
	resp, err := c.http.Post(c.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return Envelope{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return Envelope{}, err
	}
	var env Envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return Envelope{}, fmt.Errorf("decode response (HTTP %d) %q: %w", resp.StatusCode, raw, err)
	}
	return env, nil
}

// WaitReady polls status until the node answers or the deadline passes.
func (c *Client) WaitReady(t testing.TB, timeout time.Duration) {
	t.Helper()
	var env Envelope
	var err error
	if !wait.Until(timeout, func() bool {
		env, err = c.Call("status", map[string]any{})
		return err == nil && env.Result != nil
	}) {
		t.Fatalf("%s did not answer status within %s: %v %s", c.URL, timeout, err, env.Error)
	}
}

// Canonical re-encodes JSON with sorted keys, so equal documents compare
// equal as strings; numbers keep their text.
func Canonical(raw json.RawMessage) string {
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

// ScrapeMetrics reads the Prometheus text exposition at addr's /metrics
// into sample → value (sample is the metric name with its labels as
// written).
func ScrapeMetrics(addr string) (map[string]float64, error) {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: HTTP %d", resp.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}
