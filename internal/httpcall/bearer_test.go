package httpcall_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/httpcall"
)

// TestClientSendsItsKeyAsABearerHeader: a Client with a key sends
// "Authorization: Bearer KEY" with its GETs and POSTs; one without sends
// no Authorization header.
func TestClientSendsItsKeyAsABearerHeader(t *testing.T) {
	t.Parallel()
	headers := make(chan []string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers <- r.Header.Values("Authorization")
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		bearer string
		want   []string
	}{{"", nil}, {"K3Y-1.a_b~c+d/e=", []string{"Bearer K3Y-1.a_b~c+d/e="}}} {
		client := httpcall.Client{HTTP: srv.Client(), Bearer: c.bearer, Limit: 10}
		_, err := client.Get(t.Context(), srv.URL+"/v0/block/5")
		require.NoError(t, err)
		require.Equal(t, c.want, <-headers, "GET with %q", c.bearer)
		_, err = client.PostJSON(t.Context(), srv.URL, []byte("{}"))
		require.NoError(t, err)
		require.Equal(t, c.want, <-headers, "POST with %q", c.bearer)
	}
}

// TestCheckBearerRefusesWhatNoHeaderHoldsWithoutShowingIt.
func TestCheckBearerRefusesWhatNoHeaderHoldsWithoutShowingIt(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", "K3Y", "a-b.c_d~e+f/g=="} {
		require.NoError(t, httpcall.CheckBearer(ok), ok)
	}
	for _, bad := range []string{"s3cr3t key", "s3cr3t\n", "s3cr3t\r\nX-Other: 1", "s3cr3t\x00", "s3cr3té", "\ts3cr3t"} {
		err := httpcall.CheckBearer(bad)
		require.ErrorIs(t, err, httpcall.ErrBadBearer, "%q", bad)
		require.NotContains(t, err.Error(), "s3cr3t")
	}
}
