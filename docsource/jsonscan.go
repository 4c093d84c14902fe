package docsource

import (
	"encoding/json"
	"errors"
	"fmt"
)

// A document is taken apart by one scan of its bytes: objects into their
// members (exact, case-sensitive names, in order, every value kept as the
// bytes it came as) and arrays into their items. The scan validates what
// it passes over as encoding/json would (RFC 8259: strings, escapes,
// numbers, literals), so every byte kept is valid JSON, and reports
// whitespace outside strings so that a document not served compact is
// compacted once before it is taken apart.

// errNotCompact is returned by a scan that met whitespace between tokens.
var errNotCompact = errors.New("not compact")

// scanError is a syntax error at an offset of the scanned value.
func scanError(at int, what string) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", at, what)
}

// skipValue returns the offset just past the value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, scanError(i, "unexpected end")
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		return skipContainer(b, i, '}')
	case c == '[':
		return skipContainer(b, i, ']')
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		return 0, errNotCompact
	default:
		return 0, scanError(i, fmt.Sprintf("unexpected %q", c))
	}
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, scanError(i, "invalid literal")
	}
	return i + len(lit), nil
}

// skipNumber passes an RFC 8259 number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return 0, scanError(start, "invalid number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0, scanError(start, "invalid number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, scanError(start, "invalid number")
		}
	}
	return i, nil
}

// plainString marks the bytes a string holds as they are: not '"', not
// '\\', not a control character.
var plainString = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipString passes a string starting at b[i] == '"'. Bytes of invalid
// UTF-8 pass (encoding/json accepts them too, replacing them only when it
// decodes); bytes kept as they came are kept as they came.
func skipString(b []byte, i int) (int, error) {
	start := i
	i++
	for {
		for i < len(b) && plainString[b[i]] {
			i++
		}
		if i >= len(b) {
			return 0, scanError(start, "unterminated string")
		}
		switch b[i] {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 >= len(b) {
				return 0, scanError(start, "unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					return 0, scanError(i, "invalid \\u escape")
				}
				i += 6
			default:
				return 0, scanError(i, "invalid escape")
			}
		default:
			return 0, scanError(i, "control character in string")
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// skipContainer passes an object or array starting at b[i].
func skipContainer(b []byte, i int, end byte) (int, error) {
	if end == '}' {
		return scanObject(b, i, func(_ []byte, at int) (int, error) { return skipValue(b, at) })
	}
	return scanArray(b, i, func(at int) (int, error) { return skipValue(b, at) })
}

// scanObject passes the object at b[i], calling value with each member's
// key (the string's bytes, quotes included) and the offset of its value,
// which value passes (descending into it, or skipping it) and returns the
// offset past. It returns the offset past the object.
func scanObject(b []byte, i int, value func(key []byte, at int) (int, error)) (int, error) {
	i, empty, err := enter(b, i, '{', '}', "want an object")
	if empty || err != nil {
		return i, err
	}
	for {
		if i >= len(b) || b[i] != '"' {
			if i < len(b) && isSpace(b[i]) {
				return 0, errNotCompact
			}
			return 0, scanError(i, "want a member name")
		}
		kend, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		if kend >= len(b) || b[kend] != ':' {
			if kend < len(b) && isSpace(b[kend]) {
				return 0, errNotCompact
			}
			return 0, scanError(kend, "want ':'")
		}
		if i, err = value(b[i:kend], kend+1); err != nil {
			return 0, err
		}
		if done, err := afterValue(b, &i, '}'); done || err != nil {
			return i, err
		}
	}
}

// scanArray passes the array at b[i] as scanObject passes an object,
// calling value with the offset of each item.
func scanArray(b []byte, i int, value func(at int) (int, error)) (int, error) {
	i, empty, err := enter(b, i, '[', ']', "want an array")
	if empty || err != nil {
		return i, err
	}
	for {
		if i, err = value(i); err != nil {
			return 0, err
		}
		if done, err := afterValue(b, &i, ']'); done || err != nil {
			return i, err
		}
	}
}

// enter passes the opening byte of the container at b[i] (else the error
// says want); empty says the container closed at once, the offset then
// being past it.
func enter(b []byte, i int, opening, closing byte, want string) (next int, empty bool, err error) {
	if i >= len(b) || b[i] != opening {
		return 0, false, scanError(i, want)
	}
	i++
	if i < len(b) && b[i] == closing {
		return i + 1, true, nil
	}
	return i, false, nil
}

// afterValue passes the ',' after a value of a container, or its closing
// byte (done; *i is then past the container).
func afterValue(b []byte, i *int, closing byte) (done bool, err error) {
	switch {
	case *i < len(b) && b[*i] == ',':
		*i++
		return false, nil
	case *i < len(b) && b[*i] == closing:
		*i++
		return true, nil
	case *i < len(b) && isSpace(b[*i]):
		return false, errNotCompact
	}
	return false, scanError(*i, fmt.Sprintf("want ',' or '%c'", closing))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// members returns the members of the object raw (which is the whole of
// raw), in order.
func members(raw []byte) ([]member, error) {
	var out []member
	end, err := scanObject(raw, 0, func(key []byte, at int) (int, error) {
		var v json.RawMessage
		end, err := rawValue(raw, at, &v)
		out = append(out, member{key: keyName(key), rawKey: key, value: v})
		return end, err
	})
	return out, whole(raw, end, err)
}

// items returns the items of the array raw (which is the whole of raw).
func items(raw []byte) ([]json.RawMessage, error) {
	out := []json.RawMessage{} // [] is an empty list, not nil, as encoding/json decodes it
	end, err := scanArray(raw, 0, func(at int) (int, error) {
		var v json.RawMessage
		end, err := rawValue(raw, at, &v)
		out = append(out, v)
		return end, err
	})
	return out, whole(raw, end, err)
}

// whole is err, or an error when a scan that ended at end left data
// after the value.
func whole(raw []byte, end int, err error) error {
	if err == nil && end != len(raw) {
		err = scanError(end, "data after the value")
	}
	return err
}

// rawValue passes the value at b[at] and keeps it in *v.
func rawValue(b []byte, at int, v *json.RawMessage) (int, error) {
	end, err := skipValue(b, at)
	if err == nil {
		*v = b[at:end]
	}
	return end, err
}

// keyName is a member name's string: its bytes between the quotes, or,
// when it has escapes, what they stand for.
func keyName(key []byte) string {
	inner := key[1 : len(key)-1]
	for _, c := range inner {
		if c == '\\' {
			var s string
			if json.Unmarshal(key, &s) == nil {
				return s
			}
			break
		}
	}
	return string(inner)
}
