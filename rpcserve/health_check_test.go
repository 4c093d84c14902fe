package rpcserve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHealthURL: an unspecified listen host is asked on loopback; the
// API key goes in the path.
func TestHealthURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		listen, key string
		want        string
	}{
		{"127.0.0.1:3030", "", "http://127.0.0.1:3030/health"},
		{"0.0.0.0:3030", "", "http://127.0.0.1:3030/health"},
		{"[::]:3030", "k1", "http://127.0.0.1:3030/k1/health"},
		{":8080", "", "http://127.0.0.1:8080/health"},
		{"[::1]:3030", "", "http://[::1]:3030/health"},
	} {
		got, err := HealthURL(c.listen, c.key)
		require.NoError(t, err)
		require.Equal(t, c.want, got, c.listen)
	}
	_, err := HealthURL("3030", "")
	require.ErrorContains(t, err, `"3030": want host:port`)
}

// TestAskHealth: nil on a 200, the status otherwise.
func TestAskHealth(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	require.NoError(t, AskHealth(context.Background(), srv.URL+"/health"))
	require.ErrorContains(t, AskHealth(context.Background(), srv.URL+"/k/health"), "answered 503 Service Unavailable")
}
