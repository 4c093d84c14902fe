package httpcall_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/httpcall"
)

func TestParseHTTPTakesAbsoluteHTTPURLsOnly(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"http://h", "https://h:3030/base?apiKey=K", "http://u:p@h/"} {
		u, parsed := httpcall.ParseHTTP(ok)
		require.True(t, parsed, ok)
		require.NotEmpty(t, u.Host, ok)
	}
	for _, bad := range []string{"", "h:3030", "rpc.example", "ftp://h", "HTTP://h", "http://", "http:///path", "http://a b/", "/var/lake"} {
		_, parsed := httpcall.ParseHTTP(bad)
		require.False(t, parsed, bad)
	}
	require.True(t, httpcall.IsHTTP("https://h"))
	require.False(t, httpcall.IsHTTP("./lake"))
}
