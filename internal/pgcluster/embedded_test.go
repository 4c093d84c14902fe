package pgcluster

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDefaultDir: XDG_DATA_HOME, then HOME; /var/lib/nearline as root,
// whose home the postgres user cannot pass.
func TestDefaultDir(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		vars map[string]string
		root bool
		want string
	}{
		{map[string]string{"XDG_DATA_HOME": "/x/share", "HOME": "/home/u"}, false, "/x/share/nearline"},
		{map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/home/u"}, false, "/home/u/.local/share/nearline"},
		{map[string]string{"HOME": "/home/u"}, false, "/home/u/.local/share/nearline"},
		{map[string]string{"HOME": "/root", "XDG_DATA_HOME": "/root/.local/share"}, true, "/var/lib/nearline"},
	} {
		got, err := DefaultDir(func(k string) string { return c.vars[k] }, c.root)
		require.NoError(t, err)
		require.Equal(t, c.want, got)
	}
	_, err := DefaultDir(func(string) string { return "" }, false)
	require.ErrorIs(t, err, ErrNoHome)
}

// TestOpenEmbedded: the embedded PostgreSQL is made with its database,
// answers on the URL, and its release stops it, saying so; without
// Create, a directory with no cluster is ErrNoCluster.
func TestOpenEmbedded(t *testing.T) {
	t.Parallel()
	dir := localDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, _, err := OpenEmbedded(ctx, LocalConfig{Dir: dir}, nil)
	require.ErrorIs(t, err, ErrNoCluster)

	var log bytes.Buffer
	url, release, err := OpenEmbedded(ctx, LocalConfig{Dir: dir, Create: true, Throwaway: true}, slog.New(slog.NewTextHandler(&log, nil)))
	require.NoError(t, err)
	require.Contains(t, url, "/"+EmbeddedDatabase)
	selectOne(t, ctx, url)
	require.Contains(t, log.String(), "created=true started=true")
	release()
	require.Contains(t, log.String(), "embedded PostgreSQL stopped")
}
