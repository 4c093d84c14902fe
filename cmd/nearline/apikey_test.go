package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/store/storetest"
)

// apiKey is the key the tests' upstream URLs carry: no output may show it.
const apiKey = "cmd-s3cr3t"

// TestUpstreamWithAnAPIKeyPassesTheFlagRules: an --upstream (or
// NEARLINE_UPSTREAM) with ?apiKey= is a URL like another.
func TestUpstreamWithAnAPIKeyPassesTheFlagRules(t *testing.T) {
	t.Parallel()
	genesis := filepath.Join(t.TempDir(), "genesis.json")
	require.NoError(t, os.WriteFile(genesis, []byte(`{}`), 0o644))
	db := []string{"--database-url", "postgres://127.0.0.1:1/x", "--genesis", genesis}
	for _, c := range []struct {
		vars map[string]string
		args []string
	}{
		{nil, []string{"--source", "neardata", "--upstream", "http://host?apiKey=" + apiKey}},
		{nil, []string{"--source", "neardata", "--upstream", "https://mainnet.neardata.xyz/?apiKey=" + apiKey + "&x=1,http://other"}},
		{map[string]string{"NEARLINE_UPSTREAM": "https://host?apiKey=" + apiKey, "NEARLINE_SOURCE": "neardata"}, nil},
		{nil, []string{"--upstream", "http://node:3030/?apiKey=" + apiKey}},
		{nil, []string{"--source", "lake", "--upstream", "http://bucket?apiKey=" + apiKey, "--rpc-upstream", "http://node?apiKey=" + apiKey}},
	} {
		env, _, _ := testEnv(c.vars)
		fs := newFlagSet(env, "index", "")
		flags := registerIndexFlags(fs, env)
		require.NoError(t, env.flags().Parse(fs, append(db, c.args...)))
		require.NoError(t, flags.check(), "%v %v", c.vars, c.args)
	}
}

// TestAPIKeyIsNeverShown: a refused URL, -h with the upstream in the
// environment, a chain check that fails and an upstream that never
// answers name the upstream redacted (apiKey=REDACTED), never its key;
// -h with the key flags' variables set, and a refused key, never show
// --upstream-api-key's or --rpc-upstream-api-key's value.
func TestAPIKeyIsNeverShown(t *testing.T) {
	t.Parallel()
	noKey := func(t *testing.T, out string, want ...string) {
		t.Helper()
		require.NotContains(t, out, apiKey)
		for _, w := range want {
			require.Contains(t, out, w)
		}
	}
	t.Run("refused URL", func(t *testing.T) {
		t.Parallel()
		env, stdout, stderr := testEnv(map[string]string{"NEARLINE_UPSTREAM": "127.0.0.1:3030?apiKey=" + apiKey})
		code := run(context.Background(), env, []string{"index", "--database-url", "postgres://127.0.0.1:1/x"})
		require.Equal(t, 2, code)
		noKey(t, stdout.String()+stderr.String(),
			`NEARLINE_UPSTREAM="127.0.0.1:3030?apiKey=REDACTED": "127.0.0.1:3030?apiKey=REDACTED" is not an http:// or https:// URL`)
		env, stdout, stderr = testEnv(nil)
		code = run(context.Background(), env, []string{"serve", "--database-url", "postgres://127.0.0.1:1/x", "--forward-url", "node?apiKey=" + apiKey})
		require.Equal(t, 2, code)
		noKey(t, stdout.String()+stderr.String(), `--forward-url "node?apiKey=REDACTED"`)
	})
	t.Run("help", func(t *testing.T) {
		t.Parallel()
		env, stdout, stderr := testEnv(map[string]string{"NEARLINE_UPSTREAM": "https://host?apiKey=" + apiKey,
			"NEARLINE_RPC_UPSTREAM": "https://u:" + apiKey + "@node"})
		require.Equal(t, 0, run(context.Background(), env, []string{"index", "-h"}))
		noKey(t, stdout.String()+stderr.String(), `(default "https://host?apiKey=REDACTED")`, `(default "https://REDACTED@node")`)
	})
	t.Run("help with the keys in the environment", func(t *testing.T) {
		t.Parallel()
		for _, cmd := range []string{"index", "run"} {
			env, stdout, stderr := testEnv(map[string]string{"NEARLINE_UPSTREAM_API_KEY": apiKey, "NEARLINE_RPC_UPSTREAM_API_KEY": apiKey + "-rpc"})
			require.Equal(t, 0, run(context.Background(), env, []string{cmd, "-h"}))
			noKey(t, stdout.String()+stderr.String(), "(env NEARLINE_UPSTREAM_API_KEY) (set; not shown)",
				"(env NEARLINE_RPC_UPSTREAM_API_KEY) (set; not shown)")
		}
		// Given on the command line before -h, the key is not shown either.
		env, stdout, stderr := testEnv(nil)
		require.Equal(t, 0, run(context.Background(), env, []string{"index", "--upstream-api-key", apiKey, "-h"}))
		noKey(t, stdout.String()+stderr.String(), "-upstream-api-key string")
	})
	t.Run("refused key", func(t *testing.T) {
		t.Parallel()
		neardata := []string{"index", "--database-url", "postgres://127.0.0.1:1/x", "--source", "neardata", "--upstream", "http://host", "--rpc-upstream", "http://node"}
		for _, c := range []struct {
			vars map[string]string
			args []string
			want string
		}{
			{map[string]string{"NEARLINE_UPSTREAM_API_KEY": apiKey + " two words"}, nil, "NEARLINE_UPSTREAM_API_KEY: an API key may hold only visible ASCII characters"},
			{nil, []string{"--upstream-api-key", apiKey + "\r\nX-Injected: 1"}, "--upstream-api-key: an API key may hold only visible ASCII characters"},
			{map[string]string{"NEARLINE_UPSTREAM_API_KEY": "bad key"}, []string{"--upstream-api-key", apiKey + "\tx"}, "--upstream-api-key: an API key"},
			{map[string]string{"NEARLINE_RPC_UPSTREAM_API_KEY": apiKey + "é"}, nil, "NEARLINE_RPC_UPSTREAM_API_KEY: an API key may hold only visible ASCII characters"},
		} {
			env, stdout, stderr := testEnv(c.vars)
			require.Equal(t, 2, run(context.Background(), env, append(neardata, c.args...)))
			noKey(t, stdout.String()+stderr.String(), c.want)
		}
	})
	t.Run("database password", func(t *testing.T) {
		t.Parallel()
		env, stdout, stderr := testEnv(map[string]string{"NEARLINE_DATABASE_URL": "postgres://nearline:" + apiKey + "@127.0.0.1:1/x?sslmode=disable"})
		require.Equal(t, 0, run(context.Background(), env, []string{"serve", "-h"}))
		noKey(t, stdout.String()+stderr.String(), `(default "postgres://REDACTED@127.0.0.1:1/x?sslmode=REDACTED")`)
	})
	t.Run("server keys", func(t *testing.T) {
		t.Parallel()
		for _, command := range []string{"serve", "run", "health"} {
			env, stdout, stderr := testEnv(map[string]string{"NEARLINE_API_KEYS": "first," + apiKey})
			require.Equal(t, 0, run(context.Background(), env, []string{command, "-h"}))
			noKey(t, stdout.String()+stderr.String(), "(set; not shown)")
		}
		env, stdout, stderr := testEnv(nil)
		code := run(context.Background(), env, []string{"serve", "--database-url", "postgres://127.0.0.1:1/x", "--api-keys", "ok,a/" + apiKey})
		require.Equal(t, 2, code)
		noKey(t, stdout.String()+stderr.String(), "api key #2 is blank or holds a character not allowed")
	})
	t.Run("chain check", func(t *testing.T) {
		t.Parallel()
		upstream, genesis := simChain(t, 5)
		edited := editedGenesis(t, genesis, map[string]any{"chain_id": "testnet"})
		code, out := indexOnce(t, "--database-url", storetest.NewDatabaseURL(t), "--upstream", upstream+"?apiKey="+apiKey,
			"--genesis", edited, "--to", "10")
		require.Equal(t, 1, code, out)
		noKey(t, out, "the upstream "+upstream+"?apiKey=REDACTED is of another chain")
	})
	for _, source := range []string{sourceRPC, sourceNeardata} {
		t.Run("upstream down/"+source, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			env, _, _ := testEnv(nil)
			env.logger = slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})) // the retries too
			args := []string{"index", "--database-url", storetest.NewDatabaseURL(t), "--source", source,
				"--upstream", closedURL(t) + "/?apiKey=" + apiKey, "--upstream-api-key", apiKey + "-header",
				"--to", "10", "--upstream-timeout", "200ms", "--upstream-patience", "2s"}
			if source == sourceNeardata {
				_, genesis := simChain(t, 6)
				args = append(args, "--genesis", genesis)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			code := run(ctx, env, args)
			require.Equal(t, 1, code, out.String())
			noKey(t, out.String(), "longer than the patience of 2s", "upstream unreachable", "apiKey=REDACTED", "failed, retrying")
		})
	}
}
