package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/httpcall/httpcalltest"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/store/storetest"
)

// TestEachAPIKeyGoesToItsOwnFlagsURLs: the JSON-RPC client and run's
// forwarder get --upstream-api-key with --source rpc (the node is
// --upstream), and --rpc-upstream-api-key with a document source, never
// the other's key; a key with no URL of its flag to go to is refused.
func TestEachAPIKeyGoesToItsOwnFlagsURLs(t *testing.T) {
	t.Parallel()
	upKey := map[string]string{"NEARLINE_UPSTREAM_API_KEY": "up-key"}
	keys := map[string]string{"NEARLINE_UPSTREAM_API_KEY": "up-key", "NEARLINE_RPC_UPSTREAM_API_KEY": "rpc-key"}
	for _, c := range []struct {
		vars             map[string]string
		args             []string
		wantURL, wantKey string
		wantErr          string
	}{
		{upKey, []string{"--upstream", "http://node,http://other"}, "http://node", "up-key", ""},
		{keys, []string{"--source", "neardata", "--upstream", "http://docs", "--rpc-upstream", "http://rpc"}, "http://rpc", "rpc-key", ""},
		{upKey, []string{"--source", "neardata", "--upstream", "http://docs", "--rpc-upstream", "http://rpc"}, "http://rpc", "", ""},
		{upKey, []string{"--source", "neardata", "--upstream", "http://docs", "--genesis", "/dev/null"}, "", "", ""},
		{keys, []string{"--upstream", "http://node"}, "", "",
			"NEARLINE_RPC_UPSTREAM_API_KEY is for --rpc-upstream, which is not set (with --source rpc, the node's key is --upstream-api-key)"},
		{upKey, []string{"--source", "lake", "--upstream", t.TempDir(), "--genesis", "/dev/null"}, "", "",
			"NEARLINE_UPSTREAM_API_KEY is for an HTTP --upstream; a lake directory takes none"},
	} {
		env, _, _ := testEnv(c.vars)
		fs := newFlagSet(env, "run", "")
		index := registerIndexFlags(fs, env)
		serve := registerServeFlags(fs, env, true)
		require.NoError(t, env.flags().Parse(fs, c.args))
		if c.wantErr != "" {
			require.EqualError(t, index.check(), c.wantErr)
			continue
		}
		require.NoError(t, index.check(), "%v", c.args)
		settings, err := serve.settings(index.forwardTo())
		require.NoError(t, err)
		require.Equal(t, c.wantURL, settings.handler.Forward, "%v", c.args)
		require.Equal(t, c.wantKey, settings.handler.ForwardBearerToken, "%v", c.args)
		urls, key := index.rpcEndpoints()
		if c.wantURL != "" {
			require.Equal(t, c.wantURL, urls[0])
		}
		require.Equal(t, c.wantKey, key, "%v", c.args)
	}
}

// TestIndexSendsTheUpstreamAPIKeyAsABearerHeader indexes a simulated chain
// from upstreams that answer 401 without the header: neardata with
// NEARLINE_UPSTREAM_API_KEY (documents and final head), its --rpc-upstream
// (another host) receiving no Authorization header unless
// NEARLINE_RPC_UPSTREAM_API_KEY gives it its own, and a JSON-RPC
// --upstream with the key; no log line, debug included, shows a key.
func TestIndexSendsTheUpstreamAPIKeyAsABearerHeader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	node, err := sim.New(ctx, sim.Config{Seed: 3, Shards: 2, MaxHeight: 20}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = node.Close(context.Background()) })
	require.NoError(t, node.ProduceTo(ctx, 20))
	const docKey, rpcKey = "doc-" + apiKey, "rpc-" + apiKey
	index := func(t *testing.T, vars map[string]string, args ...string) {
		t.Helper()
		var logs strings.Builder
		env, _, _ := testEnv(vars)
		env.logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		args = append([]string{"index", "--database-url", storetest.NewDatabaseURL(t), "--to", "12", "--progress-interval", "1h"}, args...)
		require.Equal(t, 0, run(ctx, env, args), logs.String())
		require.NotContains(t, logs.String(), apiKey)
	}
	t.Run("neardata", func(t *testing.T) {
		t.Parallel()
		docs := &httpcalltest.KeyedUpstream{Next: node.Handler(), Key: docKey}
		rpc := &httpcalltest.KeyedUpstream{Next: node.Handler()}
		index(t, map[string]string{"NEARLINE_UPSTREAM_API_KEY": docKey},
			"--source", "neardata", "--upstream", docs.Start(t), "--rpc-upstream", strings.Replace(rpc.Start(t), "127.0.0.1", "localhost", 1))
		seen := docs.Take()
		require.GreaterOrEqual(t, len(seen), 13, "a document per height, and the final head")
		require.Equal(t, []string{"Bearer " + docKey}, slices.Compact(seen), "every document and final-head request carried the key")
		require.Equal(t, []string{""}, rpc.Distinct(), "the RPC upstream, another host, got no Authorization header")
	})
	t.Run("neardata and its own RPC key", func(t *testing.T) {
		t.Parallel()
		docs := &httpcalltest.KeyedUpstream{Next: node.Handler(), Key: docKey}
		rpc := &httpcalltest.KeyedUpstream{Next: node.Handler(), Key: rpcKey}
		index(t, map[string]string{"NEARLINE_UPSTREAM_API_KEY": docKey, "NEARLINE_RPC_UPSTREAM_API_KEY": rpcKey},
			"--source", "neardata", "--upstream", docs.Start(t), "--rpc-upstream", rpc.Start(t))
		require.Equal(t, []string{"Bearer " + docKey}, docs.Distinct())
		require.Equal(t, []string{"Bearer " + rpcKey}, rpc.Distinct())
	})
	t.Run("rpc", func(t *testing.T) {
		t.Parallel()
		rpc := &httpcalltest.KeyedUpstream{Next: node.Handler(), Key: rpcKey}
		index(t, nil, "--upstream", rpc.Start(t), "--upstream-api-key", rpcKey)
		require.Equal(t, []string{"Bearer " + rpcKey}, rpc.Distinct())
	})
}

// TestAKeyOverPlainHTTPIsWarnedOf: an API key bound for an http:// host
// that is not the loopback (as a header, or in the URL's query, --forward-url's
// included) is warned of at start, naming the flag and the URL redacted,
// never the key; https and the loopback are not.
func TestAKeyOverPlainHTTPIsWarnedOf(t *testing.T) {
	t.Parallel()
	key := map[string]string{"NEARLINE_UPSTREAM_API_KEY": "s3cr3t"}
	for _, c := range []struct {
		vars map[string]string
		args []string
		want string // the warned flag and URL; "" for none
	}{
		{key, []string{"--upstream", "http://rpc.example.org"}, "flag=--upstream url=http://rpc.example.org"},
		{nil, []string{"--upstream", "http://rpc.example.org?apiKey=s3cr3t"}, "flag=--upstream url=\"http://rpc.example.org?apiKey=REDACTED\""},
		{nil, []string{"--source", "neardata", "--upstream", "https://docs.example.org", "--rpc-upstream", "http://rpc.example.org?apiKey=s3cr3t"},
			"flag=--rpc-upstream url=\"http://rpc.example.org?apiKey=REDACTED\""},
		{key, []string{"--upstream", "https://rpc.example.org"}, ""},
		{key, []string{"--upstream", "http://127.0.0.1:3030"}, ""},
		{nil, []string{"--upstream", "http://rpc.example.org"}, ""},
	} {
		var logs strings.Builder
		env, _, _ := testEnv(c.vars)
		env.logger = slog.New(slog.NewTextHandler(&logs, nil))
		fs := newFlagSet(env, "index", "")
		index := registerIndexFlags(fs, env)
		require.NoError(t, env.flags().Parse(fs, append([]string{"--database-url", "postgres://h/db"}, c.args...)))
		require.NoError(t, index.check(), "%v", c.args)
		require.NotContains(t, logs.String(), "s3cr3t")
		if c.want == "" {
			require.Empty(t, logs.String(), "%v", c.args)
			continue
		}
		require.Contains(t, logs.String(), "level=WARN")
		require.Contains(t, logs.String(), c.want, "%v", c.args)
	}

	var logs strings.Builder
	env, _, _ := testEnv(nil)
	env.logger = slog.New(slog.NewTextHandler(&logs, nil))
	fs := newFlagSet(env, "serve", "")
	serve := registerServeFlags(fs, env, false)
	require.NoError(t, env.flags().Parse(fs, []string{"--database-url", "postgres://h/db", "--forward-url", "http://rpc.example.org?apiKey=s3cr3t"}))
	require.NoError(t, serve.check())
	require.Contains(t, logs.String(), "flag=--forward-url url=\"http://rpc.example.org?apiKey=REDACTED\"")
	require.NotContains(t, logs.String(), "s3cr3t")
}
