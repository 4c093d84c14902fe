package upstream

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/httpcall/httpcalltest"
)

// TestBearerTokenGoesWithEveryRequest: with BearerToken, the Getter's
// GETs (a document, the final head) and the Client's POSTs carry
// Authorization: Bearer <token> to an upstream that answers 401 without
// it; without the token they carry no such header and the 401 comes back.
func TestBearerTokenGoesWithEveryRequest(t *testing.T) {
	t.Parallel()
	upstream := &httpcalltest.KeyedUpstream{Key: secretKey, Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			okResult(w, `"fine"`)
			return
		}
		_, _ = w.Write([]byte(`{}`))
	})}
	url := upstream.Start(t)
	withToken := fastConfig(url)
	withToken.BearerToken = secretKey

	g, err := NewGetter(withToken, nil)
	require.NoError(t, err)
	for _, p := range []string{"/v0/block/5", "/v0/last_block/final"} {
		require.NoError(t, g.Get(context.Background(), p, func(a Answer) error {
			require.Equal(t, http.StatusOK, a.Status, p)
			return nil
		}))
	}
	c, err := NewClient(withToken, nil)
	require.NoError(t, err)
	var out string
	require.NoError(t, c.Call(context.Background(), "block", nil, &out))
	require.Equal(t, "fine", out)
	require.Equal(t, []string{"Bearer " + secretKey, "Bearer " + secretKey, "Bearer " + secretKey}, upstream.Take())

	g, err = NewGetter(fastConfig(url), nil)
	require.NoError(t, err)
	require.NoError(t, g.Get(context.Background(), "/v0/block/5", func(a Answer) error {
		require.Equal(t, http.StatusUnauthorized, a.Status)
		return nil
	}))
	c, err = NewClient(fastConfig(url), nil)
	require.NoError(t, err)
	require.ErrorContains(t, c.Call(context.Background(), "block", nil, nil), "http 401")
	require.Equal(t, []string{"", ""}, upstream.Take(), "no token, no header")
}

// TestBearerTokenStaysWithItsHost: a Client whose endpoint redirects to
// another host does not carry the token there (net/http drops it), and a
// Getter follows no redirect at all.
func TestBearerTokenStaysWithItsHost(t *testing.T) {
	t.Parallel()
	other := &httpcalltest.KeyedUpstream{Next: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { okResult(w, `"other"`) })}
	// The same listener by another name: another host to net/http.
	otherHost := strings.Replace(other.Start(t), "127.0.0.1", "localhost", 1)
	upstream := &httpcalltest.KeyedUpstream{Key: secretKey, Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherHost+r.URL.Path, http.StatusTemporaryRedirect)
	})}
	cfg := fastConfig(upstream.Start(t))
	cfg.BearerToken = secretKey
	c, err := NewClient(cfg, nil)
	require.NoError(t, err)
	var out string
	require.NoError(t, c.Call(context.Background(), "block", nil, &out))
	require.Equal(t, "other", out, "the redirect was followed")
	require.Equal(t, []string{"Bearer " + secretKey}, upstream.Take())
	require.Equal(t, []string{""}, other.Take(), "the other host got no Authorization header")

	g, err := NewGetter(cfg, nil)
	require.NoError(t, err)
	require.NoError(t, g.Get(context.Background(), "/v0/last_block/final", func(a Answer) error {
		require.Equal(t, http.StatusTemporaryRedirect, a.Status)
		return nil
	}))
	require.Empty(t, other.Take(), "the Getter did not follow the redirect")
}

// TestBadBearerTokenIsRefusedUnshown: a token no header can hold is
// refused by NewClient and NewGetter, without the token in the error.
func TestBadBearerTokenIsRefusedUnshown(t *testing.T) {
	t.Parallel()
	cfg := fastConfig("http://127.0.0.1:1")
	cfg.BearerToken = secretKey + "\r\nX-Injected: 1"
	_, err := NewClient(cfg, nil)
	require.ErrorContains(t, err, "bearer token")
	require.NotContains(t, err.Error(), secretKey)
	_, err = NewGetter(cfg, nil)
	require.ErrorContains(t, err, "bearer token")
	require.NotContains(t, err.Error(), secretKey)
}
