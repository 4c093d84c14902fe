package rpcserve

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/fixture"
)

// realDocument is a mainnet block's document, compacted, as the archive
// keeps its views.
func realDocument(t testing.TB) json.RawMessage {
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, fixture.Read(t, "real/neardata/mainnet-151768255.json")))
	return buf.Bytes()
}

// TestResultIntoWritesWhatEncodingWould: a result is written byte for
// byte as encodeInto writes it, whether it is a compact view copied as it
// is, a view with whitespace, one with what HTML escaping would change, a
// deeply nested one, or not a view at all; what is not JSON, or nests
// deeper than encoding/json allows, fails both.
func TestResultIntoWritesWhatEncodingWould(t *testing.T) {
	t.Parallel()
	for name, result := range map[string]any{
		"a mainnet block's document": realDocument(t),
		"spaced":                     json.RawMessage(" {\"a\": [1, 2],\n \"b\": \"x y\"} "),
		"html and line separators":   json.RawMessage(`{"s":"<b>&amp;` + "\u2028\u2029" + `</b>","n":-1.5e3}`),
		"deep":                       json.RawMessage(strings.Repeat("[", 9000) + strings.Repeat("]", 9000)),
		"a scalar":                   json.RawMessage(`"dontcare"`),
		"not a view":                 map[string]any{"a": "<&>", "b": []int{1}},
	} {
		var got, want bytes.Buffer
		require.NoError(t, encodeInto(&want, result), name)
		require.NoError(t, resultInto(&got, result), name)
		require.Equal(t, want.String(), got.String(), name)
	}
	for _, bad := range []string{"", "{", `{"a":1}x`, `{"a":01}`, "\"\x01\"", `{"a":1,}`,
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000)} {
		var buf bytes.Buffer
		require.Error(t, encodeInto(&buf, json.RawMessage(bad)), "%q", bad)
		require.Error(t, resultInto(&buf, json.RawMessage(bad)), "%q", bad)
	}
}

// BenchmarkResultInto writes a mainnet block's document as a result:
// "copied" is resultInto, "encoded" the encoding it replaces.
func BenchmarkResultInto(b *testing.B) {
	raw := realDocument(b)
	for name, write := range map[string]func(*bytes.Buffer, any) error{"copied": resultInto, "encoded": encodeInto} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := write(&buf, raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
