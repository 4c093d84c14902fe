package envflag

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testEnv reads vars: NEARLINE_ and the flag's name in capitals.
func testEnv(vars map[string]string) Env {
	return Env{
		Getenv: func(k string) string { return vars[k] },
		Var: func(_ *flag.FlagSet, name string) string {
			return "NEARLINE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		},
	}
}

func TestParseBytesReadsSizesWithUnits(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"192MiB": 192 << 20, "1GiB": 1 << 30, "1.5G": 3 << 29, "500MB": 500e6, "64K": 64 << 10, "268435456": 268435456, " 2 GiB ": 2 << 30} {
		got, err := parseBytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "MiB", "-1MiB", "0", "ten", "1TiB"} {
		_, err := parseBytes(in)
		require.Error(t, err, in)
	}
	require.Equal(t, "192MiB", formatBytes(192<<20))
	require.Equal(t, "1GiB", formatBytes(1<<30))
}

// TestFlagDefaultsFromEnvironment checks that a valid environment value
// becomes the flag's default, shown in the help, and that the command line
// overrides it, a malformed environment value included.
func TestFlagDefaultsFromEnvironment(t *testing.T) {
	t.Parallel()
	env := testEnv(map[string]string{"NEARLINE_WORKERS": "7", "NEARLINE_POLL_INTERVAL": "2s", "NEARLINE_BATCH_SIZE": "x"})
	fs := flag.NewFlagSet("nearline test", flag.ContinueOnError)
	var help bytes.Buffer
	fs.SetOutput(&help)
	workers, poll, batch := 32, time.Second, 50
	fs.Var(Number(&workers, 1, 0), "workers", "blocks fetched at once")
	fs.Var(Duration(&poll, Above0), "poll-interval", "poll")
	fs.Var(Number(&batch, 1, 0), "batch-size", "batch")
	require.NoError(t, env.Parse(fs, []string{"--poll-interval", "3s", "--batch-size", "9"}))
	require.Equal(t, 7, workers, "the environment sets the default")
	require.Equal(t, 3*time.Second, poll, "the command line overrides the environment")
	require.Equal(t, 9, batch, "the command line overrides a malformed environment value")
	PrintDefaults(fs)
	require.Contains(t, help.String(), "(default 7)")
	require.Contains(t, help.String(), "env NEARLINE_WORKERS")

	var out bytes.Buffer
	fs2 := flag.NewFlagSet("nearline test", flag.ContinueOnError)
	fs2.SetOutput(&out)
	fs2.Var(Number(&batch, 1, 0), "batch-size", "batch")
	err := env.Parse(fs2, nil)
	require.ErrorIs(t, err, ErrUsage, "a malformed environment value the command line leaves alone is a usage error")
	require.Equal(t, "nearline test: invalid environment value NEARLINE_BATCH_SIZE=\"x\": want an integer of 1 or more\n", out.String())
}

// TestBoolFlagFromMalformedEnvironmentStillTakesNoValue keeps `-flag` (no
// value) working when the environment's value was malformed.
func TestBoolFlagFromMalformedEnvironmentStillTakesNoValue(t *testing.T) {
	t.Parallel()
	env := testEnv(map[string]string{"NEARLINE_ARCHIVAL": "maybe"})
	fs := flag.NewFlagSet("nearline test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	archival := false
	fs.Var(Bool(&archival), "archival", "archival")
	require.NoError(t, env.Parse(fs, []string{"-archival"}))
	require.True(t, archival)
}

// TestUsageAndChecks: -h prints the synopsis, the examples and the flags;
// a check that fails is one line naming the command, and ErrUsage.
func TestUsageAndChecks(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	fs := NewFlagSet("nearline test", "--to H", &out, Example{Args: "--to 5", Does: "stop at 5"})
	to := 0
	fs.Var(Number(&to, 0, 0), "to", "last height")
	require.ErrorIs(t, testEnv(nil).Parse(fs, []string{"-h"}), flag.ErrHelp)
	require.Equal(t, "Usage: nearline test --to H\n\nExamples:\n  nearline test --to 5\n      stop at 5\n\n"+
		"Flags:\n  -to int\n    \tlast height (env NEARLINE_TO)\n", out.String())

	out.Reset()
	fs = NewFlagSet("nearline test", "", &out)
	fs.Var(Number(&to, 0, 0), "to", "last height")
	ran := false
	err := testEnv(nil).Parse(fs, []string{"--to", "3"}, func() error { return errors.New("--to 3 is too low") }, func() error { ran = true; return nil })
	require.ErrorIs(t, err, ErrUsage)
	require.Equal(t, "nearline test: --to 3 is too low\n", out.String())
	require.False(t, ran, "the checks stop at the first refusal")
}
