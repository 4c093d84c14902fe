package neardatatest_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/docsource/neardatatest"
)

// TestServesAsNeardata: a height's document, 404 BLOCK_DOES_NOT_EXIST
// beyond the documents, and the final head as a redirect to the last.
func TestServesAsNeardata(t *testing.T) {
	t.Parallel()
	s := neardatatest.New(10, [][]byte{[]byte(`{"h":10}`), []byte(`{"h":11}`)})
	t.Cleanup(s.Close)
	get := func(path string) (int, string) {
		resp, err := http.Get(s.URL() + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	for path, want := range map[string]string{"/v0/block/10": `{"h":10}`, "/v0/block/11": `{"h":11}`, "/v0/last_block/final": `{"h":11}`} {
		code, body := get(path)
		require.Equal(t, http.StatusOK, code, path)
		require.Equal(t, want, body, path)
	}
	for _, path := range []string{"/v0/block/9", "/v0/block/12"} {
		code, body := get(path)
		require.Equal(t, http.StatusNotFound, code, path)
		require.Contains(t, body, "BLOCK_DOES_NOT_EXIST", path)
	}
	require.Equal(t, int64(3), s.Documents.Load())
	require.Equal(t, int64(1), s.Heads.Load())
}
