package httpcall_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/httpcall"
)

func TestRedactURLHidesQueryValuesAndUserInformation(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"https://mainnet.neardata.xyz":                   "https://mainnet.neardata.xyz",
		"https://mainnet.neardata.xyz/":                  "https://mainnet.neardata.xyz/",
		"https://mainnet.neardata.xyz?apiKey=K3Y":        "https://mainnet.neardata.xyz?apiKey=REDACTED",
		"https://host/base/?apiKey=K3Y&x=1":              "https://host/base/?apiKey=REDACTED&x=REDACTED",
		"https://host/?K3Y":                              "https://host/?REDACTED",
		"https://host/?apiKey=":                          "https://host/?apiKey=REDACTED",
		"https://user:pa55@host:3030/rpc":                "https://REDACTED@host:3030/rpc",
		"https://t0ken@host/rpc#frag":                    "https://REDACTED@host/rpc#REDACTED",
		"/data/lake":                                     "/data/lake",
		"/data/mainnet-lake-mirror-2025/x":               "/data/mainnet-lake-mirror-2025/x",
		"http://a b/?apiKey=K3Y":                         "http://a b/?apiKey=REDACTED",
		"http://user:pa55@a b/x?apiKey=K3Y&K3Y#K3Y":      "http://REDACTED@a b/x?apiKey=REDACTED&REDACTED#REDACTED",
		"127.0.0.1:3030?apiKey=K3Y":                      "127.0.0.1:3030?apiKey=REDACTED",
		"http://a b#K3Y?x":                               "http://a b#REDACTED",
		"http://127.0.0.1:3030/v0/block/5?apiKey=K3Y&y=": "http://127.0.0.1:3030/v0/block/5?apiKey=REDACTED&y=REDACTED",
		// A key in the path, as Infura, Ankr or GetBlock take one; the
		// paths Nearline asks for keep theirs.
		"https://near-mainnet.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161":      "https://near-mainnet.infura.io/v3/REDACTED",
		"https://go.getblock.io/0123456789abcdef0123456789abcdef/?x=1":            "https://go.getblock.io/REDACTED/?x=REDACTED",
		"https://rpc.example.org/near/K3Y_k3y-K3Y_k3y-K3Y_k3y/v0/block/151768255": "https://rpc.example.org/near/REDACTED/v0/block/151768255",
		"https://mainnet.neardata.xyz/v0/block/151768255":                         "https://mainnet.neardata.xyz/v0/block/151768255",
		"https://lake.example.org/000151768255/shard_10.json":                     "https://lake.example.org/000151768255/shard_10.json",
		"https://host/v0/last_block/final":                                        "https://host/v0/last_block/final",
		"http://a b/v3/9aa3d95b3bc440fa88ea12eaa4456161?apiKey=K3Y":               "http://a b/v3/REDACTED?apiKey=REDACTED",
	} {
		require.Equal(t, want, httpcall.RedactURL(raw), raw)
	}
}

// TestErrorsNameTheURLRedacted: a transport failure and a URL that does
// not parse name the URL without its key, and stay what they were.
func TestErrorsNameTheURLRedacted(t *testing.T) {
	t.Parallel()
	keys := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys <- r.URL.Query().Get("apiKey")
	}))
	client := httpcall.Client{HTTP: srv.Client(), Limit: 10}
	_, err := client.Get(t.Context(), srv.URL+"/v0/block/5?apiKey=K3Y")
	require.NoError(t, err)
	require.Equal(t, "K3Y", <-keys, "the request itself keeps its key")
	srv.Close()
	_, err = client.Get(t.Context(), srv.URL+"/v0/block/5?apiKey=K3Y")
	require.Error(t, err)
	require.NotContains(t, err.Error(), "K3Y")
	require.Contains(t, err.Error(), "/v0/block/5?apiKey=REDACTED")
	var ue *url.Error
	require.True(t, errors.As(err, &ue), "still the client's error")

	for _, build := range []func(string) error{
		func(u string) error { _, err := client.Get(t.Context(), u); return err },
		func(u string) error { _, err := client.PostJSON(t.Context(), u, nil); return err },
	} {
		err := build("http://a b/?apiKey=K3Y")
		require.ErrorContains(t, err, "build request")
		require.NotContains(t, err.Error(), "K3Y")
	}
}
