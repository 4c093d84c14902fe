package jsonobject_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/internal/jsonobject"
)

// TestRewriteKeepingEverythingIsTheDocument: a rewrite that keeps every
// scalar, by returning nil or the token itself, gives the document byte for
// byte, whitespace included, in a slice of its own.
func TestRewriteKeepingEverythingIsTheDocument(t *testing.T) {
	t.Parallel()
	indented, compact := blockView(t)
	docs := map[string][]byte{
		"block view indented": indented,
		"block view compact":  compact,
		"recorded answer":     fixture.Read(t, "rpc/block/testnet-187310138-by-height.json"),
		"spaced":              []byte(" \r\n\t{\"a\" :[ 1 ,\t{ } ,[ ] ,\"s\" ] , \"b\\u0063\": null}\n"),
		"scalar":              []byte(` "only" `),
	}
	for name, doc := range docs {
		for _, keep := range []func(tok []byte) []byte{
			func([]byte) []byte { return nil },
			func(tok []byte) []byte { return tok },
		} {
			visited := 0
			out, err := jsonobject.Rewrite(doc, func(_ []string, tok []byte) []byte {
				visited++
				return keep(tok)
			})
			require.NoError(t, err, name)
			require.Equal(t, string(doc), string(out), name)
			require.Positive(t, visited, name)
			out[0] = 'X'
			require.NotEqual(t, out[0], doc[0], "%s: the result is not doc's memory", name)
		}
	}
}

// TestRewriteVisitsEveryScalarWithItsPath: on the real block view, the
// scalars visited and their paths are, in order, those encoding/json's
// Decoder reads.
func TestRewriteVisitsEveryScalarWithItsPath(t *testing.T) {
	t.Parallel()
	indented, compact := blockView(t)
	for _, doc := range [][]byte{indented, compact} {
		var got []string
		_, err := jsonobject.Rewrite(doc, func(path []string, tok []byte) []byte {
			dec := json.NewDecoder(bytes.NewReader(tok))
			dec.UseNumber()
			var v any
			require.NoError(t, dec.Decode(&v))
			got = append(got, scalarLine(path, v))
			return nil
		})
		require.NoError(t, err)
		want := decoderScalars(t, doc)
		require.Greater(t, len(want), 100)
		require.Equal(t, want, got)
	}
}

// decoderScalars lists each scalar of doc in order, as scalarLine writes
// it, read by encoding/json's Decoder.
func decoderScalars(t *testing.T, doc []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out []string
	var walk func(path []string)
	walk = func(path []string) {
		if !dec.More() {
			return
		}
		tok, err := dec.Token()
		require.NoError(t, err)
		delim, ok := tok.(json.Delim)
		if !ok {
			out = append(out, scalarLine(path, tok))
			return
		}
		for dec.More() {
			if delim == '[' {
				walk(append(path, "#"))
				continue
			}
			key, err := dec.Token()
			require.NoError(t, err)
			walk(append(path, key.(string)))
		}
		_, err = dec.Token()
		require.NoError(t, err)
	}
	walk(nil)
	return out
}

// scalarLine writes path and the scalar v decoded (a json.Number for a
// number, as written).
func scalarLine(path []string, v any) string {
	return fmt.Sprintf("%s=%#v", strings.Join(path, "/"), v)
}

// TestRewritePathsAndReplacements: paths through nested objects and
// arrays, member names decoded; replacements land where their scalars
// were, longer or shorter, and nothing else moves.
func TestRewritePathsAndReplacements(t *testing.T) {
	t.Parallel()
	doc := ` {"a": [1, {"b": "x", "c": [[true], null]}], "d\u0065": {"e": -2.5e3}, "f": {}, "g": [ ], "h":"s"}` + "\n"
	replace := map[string]string{
		"a/#=1":          `100`,
		`a/#/b="x"`:      `"a longer string"`,
		"a/#/c/#=null":   `0`,
		"de/e=-2.5e3":    `7`,
		`h="s"`:          `""`,
		"a/#/c/#/#=true": `false`,
	}
	var visited []string
	out, err := jsonobject.Rewrite([]byte(doc), func(path []string, tok []byte) []byte {
		line := strings.Join(path, "/") + "=" + string(tok)
		visited = append(visited, line)
		if r, ok := replace[line]; ok {
			return []byte(r)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []string{"a/#=1", `a/#/b="x"`, "a/#/c/#/#=true", "a/#/c/#=null", "de/e=-2.5e3", `h="s"`}, visited)
	require.Equal(t, ` {"a": [100, {"b": "a longer string", "c": [[false], 0]}], "d\u0065": {"e": 7}, "f": {}, "g": [ ], "h":""}`+"\n", string(out))

	// A document that is one scalar has the empty path; a replacement at
	// the first and last bytes of a document.
	out, err = jsonobject.Rewrite([]byte(`12`), func(path []string, tok []byte) []byte {
		require.Empty(t, path)
		return []byte(`"twelve"`)
	})
	require.NoError(t, err)
	require.Equal(t, `"twelve"`, string(out))
	out, err = jsonobject.Rewrite([]byte(`[1,2]`), func(path []string, tok []byte) []byte {
		return append([]byte("-"), tok...)
	})
	require.NoError(t, err)
	require.Equal(t, `[-1,-2]`, string(out))
}

// TestRewriteRefusesInvalidDocuments: what is not one valid JSON document
// is a *SyntaxError, whatever visit returns.
func TestRewriteRefusesInvalidDocuments(t *testing.T) {
	t.Parallel()
	_, compact := blockView(t)
	bad := []string{
		``, ` `, `{`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `[1 2]`, `[1,]`, `{"a":1} x`, `1 2`, `"abc`, `"\x"`,
		"\"a\x01b\"", `{"a":tru}`, `01`, `[-]`, `{"\u00zz":1}`, `}`, `[1]]`,
		string(compact[:len(compact)-1]),
		strings.Repeat("[", 10_001) + strings.Repeat("]", 10_001),
	}
	for _, text := range bad {
		require.False(t, json.Valid([]byte(text)), text)
		_, err := jsonobject.Rewrite([]byte(text), func([]string, []byte) []byte { return nil })
		var syntax *jsonobject.SyntaxError
		require.True(t, errors.As(err, &syntax), "%.40q: %v", text, err)
	}
}
