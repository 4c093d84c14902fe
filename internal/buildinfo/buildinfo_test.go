package buildinfo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRead: a test binary records no VCS revision, so the linked commit is
// the commit, and none is unknown; the Go version is recorded.
func TestRead(t *testing.T) {
	t.Parallel()
	require.Equal(t, "0123abcd", Read("0123abcd").Commit)
	b := Read("")
	require.Empty(t, b.Commit)
	require.NotEmpty(t, b.Version)
	require.True(t, strings.HasPrefix(b.GoVersion, "go1."), b.GoVersion)
}
