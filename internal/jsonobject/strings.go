package jsonobject

import (
	"encoding/json"
	"errors"
)

// errNotSimple ends Strings' own decoding: encoding/json decodes the text.
var errNotSimple = errors.New("not a list of simple strings")

// Strings decodes the JSON array of strings raw as encoding/json decodes it
// into a []string. Compact text whose strings are printable ASCII with
// only two-character escapes (\" \\ \/ \b \f \n \r \t), as an outcome's
// logs are, is decoded here; anything else (a \u escape, a byte outside
// printable ASCII, a value that is not a string, whitespace, text that is
// not JSON, null) is decoded by encoding/json, for its values and errors.
func Strings(raw []byte) ([]string, error) {
	out := []string{}
	end, err := scanArray(raw, 0, compact, func(at int) (int, error) {
		if at >= len(raw) || raw[at] != '"' {
			return 0, errNotSimple
		}
		end, err := skipString(raw, at)
		if err != nil {
			return 0, err
		}
		s, ok := unescapeSimple(raw[at+1 : end-1])
		if !ok {
			return 0, errNotSimple
		}
		out = append(out, s)
		return end, nil
	})
	if err == nil && compact.trailing(raw, end) == nil {
		return out, nil
	}
	var v []string
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// unescapeSimple returns what the inside of a JSON string stands for when
// it is printable ASCII whose escapes are the two-character ones.
func unescapeSimple(b []byte) (string, bool) {
	escapes := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c < 0x20 || c >= 0x7f {
			return "", false
		}
		if c == '\\' {
			if i+1 >= len(b) || simpleEscape(b[i+1]) == 0 {
				return "", false
			}
			escapes++
			i++
		}
	}
	if escapes == 0 {
		return string(b), true
	}
	out := make([]byte, 0, len(b)-escapes)
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' {
			i++
			out = append(out, simpleEscape(b[i]))
			continue
		}
		out = append(out, b[i])
	}
	return string(out), true
}

// simpleEscape is the byte the two-character escape \c stands for, 0 when
// \c is not one.
func simpleEscape(c byte) byte {
	switch c {
	case '"', '\\', '/':
		return c
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return 0
}
