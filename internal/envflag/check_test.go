package envflag

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChecksNameWhereTheValueCameFrom: a URL list or an address that does
// not parse is refused naming the flag or the variable it came from, a
// URL redacted; a key over http:// is warned of.
func TestChecksNameWhereTheValueCameFrom(t *testing.T) {
	t.Parallel()
	env := testEnv(map[string]string{"NEARLINE_UPSTREAM": "http://ok.example, node:3030?apiKey=s3cr3t"})
	fs := flag.NewFlagSet("nearline test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var upstream, listen string
	fs.StringVar(&upstream, "upstream", "", "upstream")
	fs.StringVar(&listen, "listen", "", "listen")
	require.NoError(t, env.CheckAddress(fs, "listen"), "empty: off")
	require.NoError(t, env.Parse(fs, []string{"--listen", "3030"}))
	err := env.CheckURLs(fs, "upstream")
	require.ErrorContains(t, err, `NEARLINE_UPSTREAM="http://ok.example,node:3030?apiKey=REDACTED": "node:3030?apiKey=REDACTED" is not an http:// or https:// URL`)
	require.NotContains(t, err.Error(), "s3cr3t")
	require.EqualError(t, env.CheckAddress(fs, "listen"), `--listen "3030": want host:port, such as 127.0.0.1:3030 or :3030`)

	var log bytes.Buffer
	require.NoError(t, fs.Set("upstream", "http://a.example?apiKey=k,https://b.example"))
	WarnInClear(fs, "upstream", false, slog.New(slog.NewTextHandler(&log, nil)))
	require.Contains(t, log.String(), "flag=--upstream url=")
	require.Equal(t, 1, bytes.Count(log.Bytes(), []byte("unencrypted")), log.String())
}
