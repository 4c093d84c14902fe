package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersion: without VCS information (a test binary has none) the
// commit is said to be unknown and how to record it; a link-time commit
// is printed and is the status method's.
func TestVersion(t *testing.T) {
	env, stdout, _ := testEnv(nil)
	require.Equal(t, 0, run(context.Background(), env, []string{"version"}))
	require.Contains(t, stdout.String(), "nearline ")
	require.Contains(t, stdout.String(), "commit: unknown (built without VCS information")
	require.Contains(t, stdout.String(), "go: go1.")

	commit = "0123abcd"
	t.Cleanup(func() { commit = "" })
	env, stdout, _ = testEnv(nil)
	require.Equal(t, 0, run(context.Background(), env, []string{"version"}))
	require.Contains(t, stdout.String(), "commit: 0123abcd\n")
	env, _, _ = testEnv(nil)
	settings, err := registerServeFlagsForTest(env).settings("", "")
	require.NoError(t, err)
	require.Equal(t, "0123abcd", settings.archive.Commit)
}

func registerServeFlagsForTest(env *environment) *serveFlags {
	fs := newFlagSet(env, "serve", "")
	f := registerServeFlags(fs, env, false)
	_ = fs.Parse(nil)
	return f
}

// TestHealthCommand: exit 0 on a 200 from /health, 1 on a 503 or no
// server, 2 on a malformed address.
func TestHealthCommand(t *testing.T) {
	t.Parallel()
	var unhealthy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/key/health" || r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if unhealthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	vars := map[string]string{"NEARLINE_LISTEN": addr, "NEARLINE_API_KEYS": "key,other"}

	env, stdout, _ := loggedEnv(vars)
	require.Equal(t, 0, run(context.Background(), env, []string{"health"}))
	require.Equal(t, "healthy\n", stdout.String())

	unhealthy.Store(true)
	env, _, stderr := loggedEnv(vars)
	require.Equal(t, 1, run(context.Background(), env, []string{"health"}))
	require.Contains(t, stderr.String(), "503 Service Unavailable")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	ln.Close()
	env, _, _ = loggedEnv(nil)
	require.Equal(t, 1, run(context.Background(), env, []string{"health", "--listen", closed}))
	env, _, _ = loggedEnv(nil)
	require.Equal(t, 2, run(context.Background(), env, []string{"health", "--listen", "nowhere"}))
}
