package jsonobject

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// This file is the package's one JSON tokenizer, behind Parse, Each,
// Filter, Items and Rewrite and behind the exported compact scan
// (SkipValue, ScanObject, ScanArray) that takes block documents apart. It
// validates what it passes over as encoding/json does (RFC 8259 strings,
// escapes, numbers and literals; nesting up to encoding/json's 10,000
// levels), so every byte it hands out is valid JSON. A scan has a layout:
// a compact scan refuses whitespace between tokens with ErrNotCompact, a
// spaced one passes over it. Whitespace is looked at only where the byte a
// scan expects is not found, so a compact text costs the same either way.

// ErrNotCompact is returned by a compact scan that met whitespace between
// tokens: the text is to be compacted (json.Compact) and scanned again.
var ErrNotCompact = errors.New("not compact")

// SyntaxError is a text that is not valid JSON, and where it fails.
type SyntaxError struct {
	Offset int    // the offset in the scanned text of what is wrong
	Msg    string // what is wrong
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

func syntaxError(at int, msg string) error { return &SyntaxError{Offset: at, Msg: msg} }

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

// layout says whether a scan passes over whitespace between tokens.
type layout bool

const (
	compact layout = false // whitespace between tokens is ErrNotCompact
	spaced  layout = true  // whitespace between tokens is passed over
)

// space is called where b[i] is not the byte a scan expects: it returns
// the offset past the whitespace at b[i] (i when there is none), or, for a
// compact scan that met whitespace, ErrNotCompact.
func (l layout) space(b []byte, i int) (int, error) {
	if i >= len(b) || !isSpace(b[i]) {
		return i, nil
	}
	if l == compact {
		return i, ErrNotCompact
	}
	return skipSpace(b, i), nil
}

// skipSpace returns the offset past the whitespace at b[i].
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipValue returns the offset just past the compact value at b[at],
// validated; whitespace between its tokens is ErrNotCompact. Nesting is
// counted from b[at].
func SkipValue(b []byte, at int) (int, error) { return skipValue(b, at, compact, 0) }

// ScanObject passes the compact object at b[at], calling value with each
// member's name (decoded) and the offset of its value, which value passes
// (descending into it with ScanObject or ScanArray, or with SkipValue) and
// returns the offset past; an error from value ends the scan and is
// returned as it is. ScanObject returns the offset past the object.
func ScanObject(b []byte, at int, value func(name string, at int) (int, error)) (int, error) {
	return ScanMembers(b, at, func(_ []byte, name string, at int) (int, error) { return value(name, at) })
}

// ScanMembers is ScanObject handing value each member's key as written
// (quoted, a slice of b) beside its name.
func ScanMembers(b []byte, at int, value func(key []byte, name string, at int) (int, error)) (int, error) {
	return scanMembers(b, at, compact, value)
}

// ScanArray passes the compact array at b[at] as ScanObject passes an
// object, calling value with the offset of each item.
func ScanArray(b []byte, at int, value func(at int) (int, error)) (int, error) {
	return scanArray(b, at, compact, value)
}

// Trailing returns an error when the compact text b holds anything after
// the value that ends at end.
func Trailing(b []byte, end int) error { return compact.trailing(b, end) }

// trailing returns an error when b holds anything but (for a spaced scan)
// whitespace after the value that ends at end.
func (l layout) trailing(b []byte, end int) error {
	if l == spaced {
		end = skipSpace(b, end)
	}
	if end != len(b) {
		return syntaxError(end, "data after the value")
	}
	return nil
}

// skipValue returns the offset just past the value at b[i], which depth
// containers enclose. It walks nested values in a loop, the containers it
// is in on a stack of their opening bytes, rather than by recursion: the
// documents it passes are mostly small objects in arrays.
func skipValue(b []byte, i int, l layout, depth int) (int, error) {
	var (
		buf   [64]byte
		stack = buf[:0] // the containers entered: '{' or '['
		err   error
	)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return 0, syntaxError(i, "unexpected end")
		}
		switch c := b[i]; {
		case c == '"':
			i, err = skipString(b, i)
		case c == '{' || c == '[':
			if err := nest(i, depth+len(stack)); err != nil {
				return 0, err
			}
			next, empty, err := enter(b, i, l, c, closer(c), "")
			if err != nil {
				return 0, err
			}
			i = next
			if empty {
				break
			}
			stack = append(stack, c)
			if c == '{' {
				if _, i, err = memberName(b, i, l); err != nil {
					return 0, err
				}
			}
			continue
		case c == 't':
			i, err = skipLiteral(b, i, "true")
		case c == 'f':
			i, err = skipLiteral(b, i, "false")
		case c == 'n':
			i, err = skipLiteral(b, i, "null")
		case c == '-' || (c >= '0' && c <= '9'):
			i, err = skipNumber(b, i)
		case isSpace(c):
			if i, err = l.space(b, i); err != nil {
				return 0, err
			}
			continue
		default:
			return 0, syntaxError(i, fmt.Sprintf("unexpected %q", c))
		}
		if err != nil {
			return 0, err
		}
		// A value ended at b[i]: close the containers it ends, up to one
		// with a next item.
		for {
			if len(stack) == 0 {
				return i, nil
			}
			open := stack[len(stack)-1]
			next, done, err := afterValue(b, i, l, closer(open))
			if err != nil {
				return 0, err
			}
			i = next
			if done {
				stack = stack[:len(stack)-1]
				continue
			}
			if open == '{' {
				if _, i, err = memberName(b, i, l); err != nil {
					return 0, err
				}
			}
			break
		}
	}
}

// closer is the byte that closes a container opened by open, '{' or '['.
func closer(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}

// memberName passes the name of an object's member at b[i] and its ':',
// returning the name (quoted) and the offset of its value.
func memberName(b []byte, i int, l layout) (key []byte, at int, err error) {
	if i >= len(b) || b[i] != '"' {
		if i, err = l.space(b, i); err != nil {
			return nil, 0, err
		}
		if i >= len(b) || b[i] != '"' {
			return nil, 0, syntaxError(i, "want a member name")
		}
	}
	kend, err := skipString(b, i)
	if err != nil {
		return nil, 0, err
	}
	colon := kend
	if colon >= len(b) || b[colon] != ':' {
		if colon, err = l.space(b, colon); err != nil {
			return nil, 0, err
		}
		if colon >= len(b) || b[colon] != ':' {
			return nil, 0, syntaxError(colon, "want ':'")
		}
	}
	return b[i:kend], colon + 1, nil
}

// nest checks that a container at b[at] inside depth others is not nested
// deeper than encoding/json reads.
func nest(at, depth int) error {
	if depth >= maxDepth {
		return syntaxError(at, "nested too deep")
	}
	return nil
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, syntaxError(i, "invalid literal")
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
		return 0, syntaxError(start, "invalid number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0, syntaxError(start, "invalid number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, syntaxError(start, "invalid number")
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
		for i+8 <= len(b) && !special8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && plainString[b[i]] {
			i++
		}
		if i >= len(b) {
			return 0, syntaxError(start, "unterminated string")
		}
		switch b[i] {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 >= len(b) {
				return 0, syntaxError(start, "unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					return 0, syntaxError(i, "invalid \\u escape")
				}
				i += 6
			default:
				return 0, syntaxError(i, "invalid escape")
			}
		default:
			return 0, syntaxError(i, "control character in string")
		}
	}
}

// special8 reports whether any of the 8 bytes of x is not plain in a
// string ('"', '\\' or a control character), with the bit tricks of
// "has a zero byte" and "has a byte less than n"; it may report a plain
// byte after one that is not, which the byte loop then passes.
func special8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	control := (x - ones*0x20) &^ x
	return (control|(quote-ones)&^quote|(backslash-ones)&^backslash)&highs != 0
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// scanObject passes the object at b[i], calling value with each member's
// key (quoted) and the offset just past its ':' (for a spaced scan,
// whitespace may come before the value there); value passes the value and
// returns the offset past it. It returns the offset past the object.
func scanObject(b []byte, i int, l layout, value func(key []byte, at int) (int, error)) (int, error) {
	i, empty, err := enter(b, i, l, '{', '}', "want an object")
	if empty || err != nil {
		return i, err
	}
	for {
		key, at, err := memberName(b, i, l)
		if err != nil {
			return 0, err
		}
		if i, err = value(key, at); err != nil {
			return 0, err
		}
		if i, empty, err = afterValue(b, i, l, '}'); empty || err != nil {
			return i, err
		}
	}
}

// scanMembers is scanObject handing value each member's name decoded too.
func scanMembers(b []byte, i int, l layout, value func(key []byte, name string, at int) (int, error)) (int, error) {
	return scanObject(b, i, l, func(key []byte, at int) (int, error) {
		name, err := Unquote(key)
		if err != nil {
			return 0, fmt.Errorf("member name %s: %w", key, err)
		}
		return value(key, name, at)
	})
}

// scanArray passes the array at b[i] as scanObject passes an object,
// calling value with the offset just past the '[' or ',' before each item.
func scanArray(b []byte, i int, l layout, value func(at int) (int, error)) (int, error) {
	i, empty, err := enter(b, i, l, '[', ']', "want an array")
	if empty || err != nil {
		return i, err
	}
	for {
		if i, err = value(i); err != nil {
			return 0, err
		}
		if i, empty, err = afterValue(b, i, l, ']'); empty || err != nil {
			return i, err
		}
	}
}

// enter passes the opening byte of the container at b[i] (else the error
// says want); empty says the container closed at once, the offset then
// being past it.
func enter(b []byte, i int, l layout, opening, closing byte, want string) (next int, empty bool, err error) {
	if i >= len(b) || b[i] != opening {
		return 0, false, syntaxError(i, want)
	}
	i++
	if i < len(b) && b[i] == closing {
		return i + 1, true, nil
	}
	if l == spaced {
		if j := skipSpace(b, i); j < len(b) && b[j] == closing {
			return j + 1, true, nil
		}
	}
	return i, false, nil
}

// afterValue passes the ',' after a value of a container, or its closing
// byte (done; the offset is then past the container).
func afterValue(b []byte, i int, l layout, closing byte) (next int, done bool, err error) {
	if i < len(b) {
		switch b[i] {
		case ',':
			return i + 1, false, nil
		case closing:
			return i + 1, true, nil
		}
	}
	j, err := l.space(b, i)
	switch {
	case err != nil:
		return 0, false, err
	case j != i:
		return afterValue(b, j, l, closing)
	case i >= len(b):
		return 0, false, syntaxError(i, "unexpected end")
	}
	return 0, false, syntaxError(i, fmt.Sprintf("want ',' or '%c'", closing))
}

// Unquote returns what the JSON string s (quotes included, as a scan
// passed it) stands for: its bytes between the quotes when they are plain
// ASCII without escapes, else encoding/json's decoding of it.
func Unquote(s []byte) (string, error) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", fmt.Errorf("unquote %q: not a JSON string", s)
	}
	inner := s[1 : len(s)-1]
	for _, c := range inner {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			var out string
			err := json.Unmarshal(s, &out)
			return out, err
		}
	}
	return string(inner), nil
}
