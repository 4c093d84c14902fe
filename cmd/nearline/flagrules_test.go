package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/store/storetest"
)

// tableCount is the number of tables in the public schema of the database
// at url.
func tableCount(t *testing.T, url string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var n int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n))
	return n
}

// TestRefusedBeforeDatabaseWork: every malformed or out-of-range value of
// index and run, on the command line or in the environment, exits 2 with
// a message that names what the user typed (the flag, or the variable) and
// what is wanted, before the database is touched: a fresh database holds
// no table afterwards.
func TestRefusedBeforeDatabaseWork(t *testing.T) {
	t.Parallel()
	url := storetest.NewEmptyDatabaseURL(t)
	upstream := []string{"--database-url", url, "--upstream", "http://127.0.0.1:1"}
	for _, c := range []struct {
		name string
		vars map[string]string
		args []string
		want []string
	}{
		{"to from the environment", map[string]string{"NEARLINE_TO": "abc"}, nil,
			[]string{`NEARLINE_TO="abc": want a block height`}},
		{"from on the command line", nil, []string{"--from", "ten"}, []string{`invalid value "ten" for flag -from: want a block height or "latest"`}},
		{"reversed range", nil, []string{"--from", "10", "--to", "5"}, []string{"--from 10 is above --to 5"}},
		{"negative batch size", nil, []string{"--batch-size", "-5"}, []string{`invalid value "-5" for flag -batch-size: want an integer of 1 or more`}},
		{"zero workers", nil, []string{"--workers", "0"}, []string{`invalid value "0" for flag -workers: want an integer of 1 or more`}},
		{"negative workers", nil, []string{"--workers", "-1"}, []string{`invalid value "-1" for flag -workers: want an integer of 1 or more`}},
		{"upstream concurrency", map[string]string{"NEARLINE_UPSTREAM_CONCURRENCY": "-2"}, nil,
			[]string{`NEARLINE_UPSTREAM_CONCURRENCY="-2": want an integer of 1 or more, or -1 for no bound`}},
		{"duration without a unit", nil, []string{"--poll-interval", "5"}, []string{`invalid value "5" for flag -poll-interval: a duration needs a unit: use 5s (or 5ms, 5m)`}},
		{"duration without a unit from the environment", map[string]string{"NEARLINE_PROGRESS_INTERVAL": "30"}, nil,
			[]string{`NEARLINE_PROGRESS_INTERVAL="30": a duration needs a unit: use 30s`}},
		{"zero duration", nil, []string{"--upstream-timeout", "0s"}, []string{"want a duration above 0"}},
		{"upstream not a URL", map[string]string{"NEARLINE_UPSTREAM": "127.0.0.1:3030"}, []string{"--database-url", url},
			[]string{`NEARLINE_UPSTREAM="127.0.0.1:3030": "127.0.0.1:3030" is not an http:// or https:// URL`}},
		{"rpc upstream not a URL", nil, []string{"--source", "neardata", "--rpc-upstream", "rpc.example"},
			[]string{`--rpc-upstream "rpc.example": "rpc.example" is not an http:// or https:// URL`}},
		{"missing genesis", nil, []string{"--genesis", "/nonexistent/genesis.json"},
			[]string{`--genesis "/nonexistent/genesis.json": no such file or directory`}},
		{"metrics address", nil, []string{"--metrics-listen", "9100"}, []string{`--metrics-listen "9100": want host:port`}},
		{"cursor name", map[string]string{"NEARLINE_CURSOR": "no spaces"}, nil, []string{`NEARLINE_CURSOR="no spaces"`}},
		{"snapshot without from", nil, []string{"--snapshot-accounts", "a.near"}, []string{"--snapshot-accounts needs --from"}},
	} {
		for _, cmd := range []string{"index", "run"} {
			t.Run(cmd+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				env, stdout, stderr := loggedEnv(c.vars)
				args := append([]string{cmd}, upstream...)
				if c.vars["NEARLINE_UPSTREAM"] != "" {
					args = []string{cmd}
				}
				args = append(args, c.args...)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				code := run(ctx, env, args)
				out := stdout.String() + stderr.String()
				require.Equal(t, 2, code, out)
				for _, w := range c.want {
					require.Contains(t, out, w)
				}
				require.NotContains(t, out, "Flags:", "one line, not the usage")
			})
		}
	}
	t.Cleanup(func() { require.Zero(t, tableCount(t, url), "a refused command touched the database") })
}

// TestServeRefusesBeforeDatabaseWork: serve's values too.
func TestServeRefusesBeforeDatabaseWork(t *testing.T) {
	t.Parallel()
	url := storetest.NewEmptyDatabaseURL(t)
	for _, c := range []struct {
		vars map[string]string
		args []string
		want string
	}{
		{nil, []string{"--max-batch", "0"}, `invalid value "0" for flag -max-batch: want an integer of 1 or more`},
		{map[string]string{"NEARLINE_VIEW_STATE_LIMIT": "0"}, nil, `NEARLINE_VIEW_STATE_LIMIT="0": want an integer of 1 or more, or -1 for no limit`},
		{nil, []string{"--listen", "3030"}, `--listen "3030": want host:port`},
		{map[string]string{"NEARLINE_FORWARD_URL": "node:3030"}, nil, `NEARLINE_FORWARD_URL="node:3030": "node:3030" is not an http:// or https:// URL`},
		{nil, []string{"--drain-time", "0s"}, "want a duration above 0, or a negative one"},
	} {
		env, stdout, stderr := loggedEnv(c.vars)
		code := run(context.Background(), env, append([]string{"serve", "--database-url", url}, c.args...))
		out := stdout.String() + stderr.String()
		require.Equal(t, 2, code, out)
		require.Contains(t, out, c.want)
	}
	require.Zero(t, tableCount(t, url))
}

// TestFromLatestParses: --from takes "latest" (index and run only).
func TestFromLatestParses(t *testing.T) {
	t.Parallel()
	env, _, _ := testEnv(map[string]string{"NEARLINE_FROM": "latest"})
	fs := newFlagSet(env, "index", "")
	flags := registerIndexFlags(fs, env)
	require.NoError(t, env.flags().Parse(fs, nil))
	require.True(t, flags.fromLatest)
	require.Nil(t, flags.indexer.From)
	fs = newFlagSet(env, "index", "")
	flags = registerIndexFlags(fs, env)
	require.NoError(t, env.flags().Parse(fs, []string{"--from", "12"}))
	require.False(t, flags.fromLatest, "the command line overrides the environment")
	require.Equal(t, uint64(12), *flags.indexer.From)
}
