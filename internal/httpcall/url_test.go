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

// TestInClearIsASecretOverPlainHTTPToAnotherHost: a key in the query, in
// the path or as a header, or a password, over http:// to a host that is
// not the loopback; https, the loopback and a URL with nothing secret are
// not.
func TestInClearIsASecretOverPlainHTTPToAnotherHost(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url    string
		bearer bool
		want   bool
	}{
		{"http://rpc.example.org?apiKey=K", false, true},
		{"http://u:p@10.0.0.5:3030", false, true},
		{"http://rpc.example.org", true, true},
		{"http://near-mainnet.example.org/v3/9aa3d95b3bc440fa88ea12eaa4456161", false, true},
		{"http://rpc.example.org/v0/block/151768255", false, false},
		{"http://rpc.example.org", false, false},
		{"https://rpc.example.org?apiKey=K", true, false},
		{"http://localhost:3030?apiKey=K", true, false},
		{"http://127.0.0.9:3030", true, false},
		{"http://[::1]:3030?apiKey=K", true, false},
		{"/var/lake", true, false},
	} {
		require.Equal(t, c.want, httpcall.InClear(c.url, c.bearer), "%s bearer %v", c.url, c.bearer)
	}
}
