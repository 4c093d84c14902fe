package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testEnv is a process environment for run: variables from vars, output
// captured.
func testEnv(vars map[string]string) (*environment, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	return &environment{
		stdout: &stdout,
		stderr: &stderr,
		getenv: func(k string) string { return vars[k] },
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, &stdout, &stderr
}

// TestExitStatus runs command lines that must be refused before anything
// connects anywhere, and the help forms.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	unreachable := []string{"--database-url", "postgres://127.0.0.1:1/x", "--upstream", "http://127.0.0.1:1"}
	for _, c := range []struct {
		name   string
		vars   map[string]string
		args   []string
		code   int
		stderr []string // each must appear in stderr (or stdout for help)
	}{
		{"no command", nil, nil, 2, nil},
		{"help", nil, []string{"help"}, 0, nil},
		{"-h", nil, []string{"-h"}, 0, nil},
		{"help of a command", nil, []string{"help", "index"}, 0, []string{"-workers", "NEARLINE_WORKERS"}},
		{"unknown command", nil, []string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`}},
		{"malformed flag", nil, append([]string{"index", "--workers", "many"}, unreachable...), 2, []string{`invalid value "many" for flag -workers`}},
		{"unknown flag", nil, []string{"serve", "--no-such-flag"}, 2, []string{"no-such-flag"}},
		{"stray argument", nil, []string{"status", "--database-url", "x", "extra"}, 2, []string{"unexpected arguments"}},
		{"malformed int env", map[string]string{"NEARLINE_WORKERS": "abc"}, append([]string{"index"}, unreachable...), 2,
			[]string{"NEARLINE_WORKERS", `"abc"`, "want an integer"}},
		{"malformed duration env", map[string]string{"NEARLINE_POLL_INTERVAL": "soon"}, append([]string{"index"}, unreachable...), 2,
			[]string{"NEARLINE_POLL_INTERVAL", `"soon"`, "duration"}},
		{"malformed env in run", map[string]string{"NEARLINE_MAX_BATCH": "1e3"}, append([]string{"run"}, unreachable...), 2,
			[]string{"NEARLINE_MAX_BATCH", `"1e3"`}},
		{"malformed time flag", nil, []string{"sim", "--genesis-time", "yesterday", "--block-time", "0", "--max-height", "5"}, 2,
			[]string{`invalid value "yesterday" for flag -genesis-time`, "RFC 3339"}},
		{"malformed time env", map[string]string{"NEARLINE_GENESIS_TIME": "2025-01-01"}, []string{"sim", "--block-time", "0", "--max-height", "5"}, 2,
			[]string{"NEARLINE_GENESIS_TIME", `"2025-01-01"`, "RFC 3339"}},
		{"unknown source", nil, append([]string{"index", "--source", "firehose"}, unreachable...), 2, []string{`--source "firehose": want rpc, neardata or lake`}},
		{"document source without configs", map[string]string{"NEARLINE_SOURCE": "neardata"}, append([]string{"index"}, unreachable...), 2,
			[]string{"--source neardata needs --rpc-upstream (configs) or --genesis"}},
		{"lake over http without head", nil, append([]string{"run", "--source", "lake", "--genesis", "g.json"}, unreachable...), 2,
			[]string{"--source lake over HTTP needs --rpc-upstream"}},
		{"rpc-upstream with rpc source", nil, append([]string{"index", "--rpc-upstream", "http://127.0.0.1:1"}, unreachable...), 2,
			[]string{"--rpc-upstream is for --source neardata or lake"}},
		{"malformed bool env", map[string]string{"NEARLINE_ARCHIVAL": "yes please"}, []string{"sim"}, 2,
			[]string{"NEARLINE_ARCHIVAL", `"yes please"`, "true or false"}},
		{"malformed float env", map[string]string{"NEARLINE_SKIP_RATE": "a tenth"}, []string{"sim"}, 2,
			[]string{"NEARLINE_SKIP_RATE", `"a tenth"`, "a number"}},
		{"malformed uint64 env", map[string]string{"NEARLINE_SEED": "-1"}, []string{"sim"}, 2,
			[]string{"NEARLINE_SEED", `"-1"`, "non-negative integer"}},
		{"malformed reshard heights", nil, []string{"sim", "--reshard-at", "100,x"}, 2,
			[]string{`invalid value "100,x" for flag -reshard-at`}},
		{"malformed reshard env", map[string]string{"NEARLINE_RESHARD_AT": "soon"}, []string{"sim"}, 2,
			[]string{"NEARLINE_RESHARD_AT", `"soon"`, "comma-separated heights"}},
		{"blank api keys", nil, append([]string{"serve", "--api-keys", " , "}, unreachable[:2]...), 2,
			[]string{`--api-keys holds no key`}},
		{"blank api keys env", map[string]string{"NEARLINE_API_KEYS": ","}, append([]string{"serve"}, unreachable[:2]...), 2,
			[]string{`NEARLINE_API_KEYS holds no key`}},
		{"blank api keys in run", map[string]string{"NEARLINE_API_KEYS": " ,, "}, append([]string{"run"}, unreachable...), 2,
			[]string{"NEARLINE_API_KEYS", "holds no key"}},
		{"body memory below the body limit", nil, append([]string{"serve", "--max-body-memory", "1000", "--max-body-bytes", "2000"}, unreachable[:2]...), 2,
			[]string{"max body memory 1000 is below max body bytes 2000"}},
		{"no connections", map[string]string{"NEARLINE_MAX_CONNECTIONS": "0"}, append([]string{"serve"}, unreachable[:2]...), 2,
			[]string{`NEARLINE_MAX_CONNECTIONS="0": want an integer of 1 or more`}},
		{"verify without a node", nil, []string{"verify", "--database-url", "postgres://127.0.0.1:1/x"}, 2, []string{"--against"}},
		{"verify with a bad height", nil, []string{"verify", "--database-url", "postgres://127.0.0.1:1/x", "--against", "http://127.0.0.1:1", "--from", "ten"},
			2, []string{`invalid value "ten" for flag -from: want a block height`}},
		{"verify with a bad seed", map[string]string{"NEARLINE_VERIFY_SEED": "x"}, []string{"verify", "--database-url", "postgres://127.0.0.1:1/x", "--against", "http://127.0.0.1:1"},
			2, []string{`NEARLINE_VERIFY_SEED="x": want a non-negative integer`}},
		{"verify with a node that is not a URL", nil, []string{"verify", "--database-url", "postgres://127.0.0.1:1/x", "--against", "127.0.0.1:3030"},
			2, []string{"want an absolute http:// or https:// URL"}},
		{"verify with no database", nil, []string{"verify", "--database-url", "postgres://127.0.0.1:1/x?connect_timeout=2", "--against", "http://127.0.0.1:1"}, 2, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env, stdout, stderr := testEnv(c.vars)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			code := run(ctx, env, c.args)
			out := stdout.String() + stderr.String()
			require.Equal(t, c.code, code, "exit status; output:\n%s", out)
			for _, want := range c.stderr {
				require.Contains(t, out, want)
			}
		})
	}
}

// TestEveryCommandRefusesMalformedEnvironment reads each command's help
// and sets, one at a time, the environment variable of each flag that is
// not a string to a value no number, duration or bool parses from: the
// command must refuse it (exit 2, naming variable and value) before it does
// anything. It fails if a command parses its flags without envflag's
// Parse, or a flag reads its variable without the helpers.
func TestEveryCommandRefusesMalformedEnvironment(t *testing.T) {
	t.Parallel()
	flagLine := regexp.MustCompile(`^  -(\S+)(?: (\S+))?$`)
	envVar := regexp.MustCompile(`\(env (NEARLINE_\w+)\)`)
	var checked int // migrate and status have only string flags
	for _, c := range commands() {
		env, _, stderr := testEnv(nil)
		require.Equal(t, 0, run(context.Background(), env, append(strings.Fields(c.name), "-h")))
		var kind string
		for _, line := range strings.Split(stderr.String(), "\n") {
			if m := flagLine.FindStringSubmatch(line); m != nil {
				kind = m[2] // "" for a bool; a backquoted word of the usage replaces the type
				continue
			}
			m := envVar.FindStringSubmatch(line)
			if m == nil || kind == "string" {
				continue
			}
			checked++
			t.Run(c.name+"/"+m[1], func(t *testing.T) {
				t.Parallel()
				env, stdout, stderr := testEnv(map[string]string{m[1]: "abc"})
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				code := run(ctx, env, strings.Fields(c.name))
				out := stdout.String() + stderr.String()
				require.Equal(t, 2, code, "exit status; output:\n%s", out)
				require.Contains(t, out, m[1]+`="abc": want `)
			})
		}
	}
	require.Greater(t, checked, 50, "flags checked: the help's format may have changed")
}

// TestEventsFlagTurnsTheExplorerTablesOff: --events defaults to true,
// NEARLINE_EVENTS=false turns it off and the command line wins.
func TestEventsFlagTurnsTheExplorerTablesOff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  map[string]string
		args []string
		want bool
	}{
		{nil, nil, true},
		{nil, []string{"--events=false"}, false},
		{map[string]string{"NEARLINE_EVENTS": "false"}, nil, false},
		{map[string]string{"NEARLINE_EVENTS": "false"}, []string{"--events"}, true},
	} {
		env, _, _ := testEnv(c.env)
		fs := newFlagSet(env, "index", "")
		fs.SetOutput(io.Discard)
		flags := registerIndexFlags(fs, env)
		require.NoError(t, env.flags().Parse(fs, c.args))
		require.Equal(t, c.want, flags.events, "env %v, args %v", c.env, c.args)
	}
}
