package fastjson_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/fastjson"
)

type view struct {
	Name   string          `json:"name"`
	Height uint64          `json:"height"`
	Raw    json.RawMessage `json:"raw"`
	Skip   string          `json:"-"`
	Opt    *string         `json:"opt,omitempty"`
	Nested []struct {
		Kind string `json:"kind"`
	} `json:"nested"`
}

// TestAgreesWithEncodingJSON: what the views rely on decodes and encodes
// as encoding/json does: tags, RawMessage kept as it came, a member name
// in another case, unknown members passed over, a u64 above 2^53, and
// encoding's escapes and field order.
func TestAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"name":"a.near","height":18446744073709551615,"raw":{"b": [1, 2]},"nested":[{"kind":"x"}]}`,
		`{"NAME":"b.near","Height":1,"unknown":{"x":1},"raw":"s","opt":"o","-":"no"}`,
		`{"name":"<tag>&\u2028","raw":null}`,
	} {
		var want, got view
		require.NoError(t, json.Unmarshal([]byte(in), &want), in)
		require.NoError(t, fastjson.Unmarshal([]byte(in), &got), in)
		require.Equal(t, want, got, in)
		wantOut, err := json.Marshal(want)
		require.NoError(t, err)
		gotOut, err := fastjson.Marshal(got)
		require.NoError(t, err)
		require.Equal(t, string(wantOut), string(gotOut), in)
	}
	var v view
	require.Error(t, fastjson.Unmarshal([]byte(`{"height":-1}`), &v))
	require.Error(t, fastjson.Unmarshal([]byte(`{"name":"a"`), &v))
}
