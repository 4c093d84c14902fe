package rpcserve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/rpctest"
)

var update = flag.Bool("update", false, "rewrite the expected responses in testdata/*.txt")

// A transcript file holds an optional config line and cases:
//
//	config max_body_bytes=300 max_batch=3 max_response_bytes=200 api_keys=k1,k2 forward=upstream request_timeout=50ms unhealthy
//	=== case name
//	>>> POST /path
//	request body (any number of lines, may be empty)
//	<<< 200
//	expected response body (JSON, compared after compaction; may be empty)
//
// Lines starting with '#' outside bodies are comments.
type transcriptCase struct {
	name, method, path string
	body               string
	status             int
	want               string
}

type transcript struct {
	config string
	cases  []transcriptCase
}

func parseTranscript(t *testing.T, path string) transcript {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var tr transcript
	var cur *transcriptCase
	var section string // "req" or "resp"
	var buf []string
	flush := func() {
		if cur == nil {
			return
		}
		text := strings.TrimSpace(strings.Join(buf, "\n"))
		if section == "req" {
			cur.body = text
		} else if section == "resp" {
			cur.want = text
		}
		buf = nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "=== "):
			flush()
			tr.cases = append(tr.cases, transcriptCase{name: strings.TrimPrefix(line, "=== ")})
			cur, section = &tr.cases[len(tr.cases)-1], ""
		case strings.HasPrefix(line, ">>> "):
			require.NotNil(t, cur, "request line before a case name in %s", path)
			fields := strings.Fields(strings.TrimPrefix(line, ">>> "))
			require.Len(t, fields, 2, "bad request line %q", line)
			cur.method, cur.path, section = fields[0], fields[1], "req"
		case strings.HasPrefix(line, "<<< "):
			flush()
			status, err := strconv.Atoi(strings.TrimPrefix(line, "<<< "))
			require.NoError(t, err, "bad status line %q", line)
			cur.status, section = status, "resp"
		case section == "" && strings.HasPrefix(line, "config "):
			tr.config = strings.TrimPrefix(line, "config ")
		case section == "" && (strings.HasPrefix(line, "#") || strings.TrimSpace(line) == ""):
		default:
			require.NotEmpty(t, section, "stray line %q in %s", line, path)
			buf = append(buf, line)
		}
	}
	require.NoError(t, sc.Err())
	flush()
	return tr
}

// transcriptServer builds the handler a transcript's config line asks for.
func transcriptServer(t *testing.T, config string) http.Handler {
	t.Helper()
	backend := &fakeBackend{}
	cfg := Config{}
	for _, opt := range strings.Fields(config) {
		key, value, _ := strings.Cut(opt, "=")
		switch key {
		case "max_body_bytes":
			n, err := strconv.ParseInt(value, 10, 64)
			require.NoError(t, err)
			cfg.MaxBodyBytes = n
		case "max_batch":
			n, err := strconv.Atoi(value)
			require.NoError(t, err)
			cfg.MaxBatch = n
		case "max_response_bytes":
			n, err := strconv.ParseInt(value, 10, 64)
			require.NoError(t, err)
			cfg.MaxResponseBytes = n
		case "api_keys":
			cfg.APIKeys = strings.Split(value, ",")
		case "request_timeout":
			d, err := time.ParseDuration(value)
			require.NoError(t, err)
			cfg.RequestTimeout = d
		case "forward":
			cfg.Forward = fakeUpstream(t, value)
		case "unhealthy":
			backend.unhealthy = true
		default:
			t.Fatalf("unknown transcript config %q", opt)
		}
	}
	return newTestHandler(t, backend, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// fakeUpstream returns the URL of an upstream node: "upstream" answers every
// request with what it received (rpctest.EchoUpstream); "dead" is a closed
// server.
func fakeUpstream(t *testing.T, kind string) string {
	t.Helper()
	if kind == "dead" {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		return srv.URL
	}
	require.Equal(t, "upstream", kind)
	return rpctest.EchoUpstream(t)
}

func compactOrRaw(s string) string {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(s)) != nil {
		return s
	}
	return buf.String()
}

func indentOrRaw(s string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(s), "", "  ") != nil {
		return s
	}
	return buf.String()
}

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			tr := parseTranscript(t, file)
			require.NotEmpty(t, tr.cases)
			h := transcriptServer(t, tr.config)
			var got []string
			var statuses []int
			for _, c := range tr.cases {
				req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				got = append(got, rec.Body.String())
				statuses = append(statuses, rec.Code)
				if *update {
					continue
				}
				require.Equal(t, c.status, rec.Code, "case %q: HTTP status; body %s", c.name, rec.Body.String())
				require.Equal(t, compactOrRaw(c.want), compactOrRaw(rec.Body.String()), "case %q", c.name)
			}
			if *update {
				rewriteTranscript(t, file, tr, statuses, got)
			}
		})
	}
}

func rewriteTranscript(t *testing.T, file string, tr transcript, statuses []int, got []string) {
	t.Helper()
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	// Keep everything up to the first case (comments, config) as written.
	head, _, _ := strings.Cut(string(src), "=== ")
	var out strings.Builder
	out.WriteString(head)
	for i, c := range tr.cases {
		fmt.Fprintf(&out, "=== %s\n>>> %s %s\n", c.name, c.method, c.path)
		if c.body != "" {
			out.WriteString(c.body + "\n")
		}
		fmt.Fprintf(&out, "<<< %d\n", statuses[i])
		if got[i] != "" {
			out.WriteString(indentOrRaw(got[i]) + "\n")
		}
		out.WriteString("\n")
	}
	require.NoError(t, os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644))
}
