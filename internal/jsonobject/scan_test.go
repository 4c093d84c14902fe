package jsonobject

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// scanTexts are valid and invalid JSON texts, compact and spaced: the
// table of TestScanAgreesWithEncodingJSON and the seeds of
// FuzzScanAgreesWithEncodingJSON.
var scanTexts = []string{
	`{}`, `[]`, `{"a":1}`, `[1,2,3]`, `"x"`, `"\u00e9\n\"\\\/"`, `true`, `false`, `null`,
	`0`, `-0`, `1.5`, `-1.5e+10`, `1E-3`, `18446744073709551615`, `123456789012345678901234567890`,
	`{"a":{"b":[{"c":null}]},"d":"e"}`, `"\xff\xfe"`, `{"é":"\u00e9","k\"q":"v\\"}`, `"\ud800"`,
	` {"b": 1.50, "a" : {"x": [1, 2 ,"s"]}, "c\u0041":"<&>", "d":null} `, "[\t1,\r\n2 ]\n", `{ }`, `[ ]`,
	// invalid
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{a:1}`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
	`tru`, `nul`, `"abc`, `"\x"`, `"\u12g4"`, "\"a\x01b\"", `[1 2]`, `{"a":1}x`, `"\`, `{"a" 1}`,
	`[1, ]`, `{"a":1 "b":2}`, "\"tab\there\"", `[1]]`, `{"a":1}}`, `1 2`, "\xef\xbb\xbf{}", `[,1]`, `{,}`,
	`{"a":tru}`, `{"a":01}`, `["\u00"]`, `[-]`, `[1.e5]`, `{"\u00zz":1}`,
}

// scanWhole passes text as one value and nothing after it.
func scanWhole(text []byte, l layout) error {
	at := 0
	if l == spaced {
		at = skipSpace(text, 0)
	}
	end, err := skipValue(text, at, l, 0)
	if err != nil {
		return err
	}
	return l.trailing(text, end)
}

// agreeWithEncodingJSON checks the tokenizer against encoding/json on
// text: a spaced scan, and Rewrite, accept exactly what json.Valid
// accepts (Rewrite keeping every scalar gives text back); a compact
// scan of the text trimmed (as the document path trims it) accepts it
// exactly when json.Valid does and json.Compact leaves it as it is, and
// refuses it with ErrNotCompact only when it is not compact.
func agreeWithEncodingJSON(t *testing.T, text []byte) {
	valid := json.Valid(text)
	err := scanWhole(text, spaced)
	require.Equal(t, valid, err == nil, "spaced %q: %v", text, err)
	require.NotErrorIs(t, err, ErrNotCompact)
	out, err := Rewrite(text, func(_ []string, tok []byte) []byte { return tok })
	require.Equal(t, valid, err == nil, "Rewrite %q: %v", text, err)
	if valid {
		require.Equal(t, text, out, "Rewrite %q keeping every scalar", text)
	}

	trimmed := bytes.TrimSpace(text) // which trims more than JSON's whitespace
	valid = json.Valid(trimmed)
	isCompact := false
	if valid {
		var buf bytes.Buffer
		require.NoError(t, json.Compact(&buf, trimmed))
		isCompact = bytes.Equal(buf.Bytes(), trimmed)
	}
	err = scanWhole(trimmed, compact)
	switch {
	case err == nil:
		require.True(t, valid && isCompact, "compact %q accepted", trimmed)
	case errors.Is(err, ErrNotCompact):
		require.False(t, valid && isCompact, "compact %q: %v", trimmed, err)
	default:
		require.False(t, valid, "compact %q: %v", trimmed, err)
	}
}

// TestScanAgreesWithEncodingJSON: the tokenizer accepts exactly the texts
// encoding/json accepts, and a compact scan says so when a text is not
// compact.
func TestScanAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, text := range scanTexts {
		agreeWithEncodingJSON(t, []byte(text))
	}
	for _, text := range []string{`{ "a":1}`, `{"a" :1}`, `{"a": 1}`, `{"a":1 }`, `[1, 2]`, `[ 1]`, `[1 ]`, `{ }`, `[ ]`, ` 1`} {
		_, err := SkipValue([]byte(text), 0)
		require.ErrorIs(t, err, ErrNotCompact, text)
	}
}

// TestScanNestsAsDeepAsEncodingJSON: 10,000 levels of objects or arrays
// are read, 10,001 are not, as encoding/json has it; Parse, Each and
// Rewrite count the same way.
func TestScanNestsAsDeepAsEncodingJSON(t *testing.T) {
	t.Parallel()
	nested := func(levels int, open, item, close string) []byte {
		return []byte(strings.Repeat(open, levels) + item + strings.Repeat(close, levels))
	}
	for _, levels := range []int{maxDepth, maxDepth + 1} {
		for _, text := range [][]byte{nested(levels, "[", "1", "]"), nested(levels, `{"a":`, "1", "}"), nested(levels, "[ ", "", " ]")} {
			valid := json.Valid(text)
			require.Equal(t, levels <= maxDepth, valid, "json.Valid at %d levels", levels)
			agreeWithEncodingJSON(t, text)
			_, err := Parse(text)
			require.Equal(t, valid, err == nil, "Parse at %d levels: %v", levels, err)
			_, err = Rewrite(text, func([]string, []byte) []byte { return nil })
			require.Equal(t, valid, err == nil, "Rewrite at %d levels: %v", levels, err)
			if text[0] == '{' {
				require.Equal(t, valid, Each(text, func(string, json.RawMessage) error { return nil }) == nil, "Each at %d levels", levels)
			}
		}
	}
}

// TestScanErrorsSayWhere: an error names what is wrong and its offset,
// the same in both layouts for a text without whitespace.
func TestScanErrorsSayWhere(t *testing.T) {
	t.Parallel()
	wants := map[string]string{
		`{"a":1,}`:     "invalid JSON at offset 7: want a member name",
		`{"a" 1}`:      "invalid JSON at offset 5: want ':'",
		`[1 2]`:        "invalid JSON at offset 3: want ',' or ']'",
		`[1,2`:         "invalid JSON at offset 4: unexpected end",
		"\"a\x01\"":    "invalid JSON at offset 2: control character in string",
		`["\q"]`:       "invalid JSON at offset 2: invalid escape",
		`[01]`:         "invalid JSON at offset 2: want ',' or ']'",
		`01`:           "invalid JSON at offset 1: data after the value",
		`{"a":1} x`:    "invalid JSON at offset 8: data after the value",
		`{"a":nul}`:    "invalid JSON at offset 5: invalid literal",
		`{"a":"\u12"}`: "invalid JSON at offset 6: invalid \\u escape",
	}
	for text, want := range wants {
		err := scanWhole([]byte(text), spaced)
		var syntax *SyntaxError
		require.ErrorAs(t, err, &syntax, text)
		require.EqualError(t, err, want, text)
		if !strings.ContainsAny(text, " \t\r\n") {
			require.EqualError(t, scanWhole([]byte(text), compact), want, text)
		}
	}
	err := Each([]byte(`{"a":1,"b":[tru]}`), func(string, json.RawMessage) error { return nil })
	require.EqualError(t, err, `value of "b": invalid JSON at offset 12: invalid literal`)
}

// FuzzScanAgreesWithEncodingJSON holds the tokenizer to json.Valid (see
// agreeWithEncodingJSON). go test runs the seeds; run it further by hand
// with a bounded count: go test ./internal/jsonobject -run '^$' -fuzz
// FuzzScanAgreesWithEncodingJSON -fuzztime 200000x
func FuzzScanAgreesWithEncodingJSON(f *testing.F) {
	for _, text := range scanTexts {
		f.Add([]byte(text))
	}
	f.Fuzz(func(t *testing.T, text []byte) { agreeWithEncodingJSON(t, text) })
}

// TestSpecial8FindsEveryByteNotPlain: a word with one byte that is not
// plain in a string is seen, whichever byte and wherever, beside any
// plain bytes; a word of plain bytes is not.
func TestSpecial8FindsEveryByteNotPlain(t *testing.T) {
	t.Parallel()
	for _, fill := range []byte{'a', ' ', 0x7f, 0x80, 0xff, '#', ']'} {
		for c := range 256 {
			for pos := range 8 {
				word := bytes.Repeat([]byte{fill}, 8)
				word[pos] = byte(c)
				require.Equal(t, !plainString[c], special8(binary.LittleEndian.Uint64(word)), "byte %#x at %d among %#x", c, pos, fill)
			}
		}
	}
}

// TestUnquote: a string as a scan passed it decodes as encoding/json
// decodes it; what is not a string is an error, not a panic.
func TestUnquote(t *testing.T) {
	t.Parallel()
	for _, text := range []string{`""`, `"plain"`, `"c\u0041"`, `"é"`, "\"\xff\"", `"\ud800"`, `"\n\"\\"`} {
		var want string
		require.NoError(t, json.Unmarshal([]byte(text), &want), text)
		got, err := Unquote([]byte(text))
		require.NoError(t, err, text)
		require.Equal(t, want, got, text)
	}
	for _, bad := range []string{``, `"`, `x`, `1`, `"a`} {
		_, err := Unquote([]byte(bad))
		require.Error(t, err, bad)
	}
}
