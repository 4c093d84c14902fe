// Package jsonread is a fast pass over compact JSON for decoders written
// for one type: exact member names, each once, plain strings (ASCII
// without escapes) and plain numbers. What it does not take, its caller
// decodes with the general decoder (internal/fastjson), so that values
// and errors are the general decoder's.
package jsonread

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"

	"github.com/nearline/nearline/internal/fastjson"
	"github.com/nearline/nearline/internal/jsonobject"
)

// Reader is a fast pass over compact JSON B, at B[I]. Each of its methods
// returns false when what is at B[I] is not of the shape it takes, I then
// being anywhere: the caller then decodes the value with the general
// decoder (General), so that what it gets is the general decoder's.
type Reader struct {
	B []byte
	I int
	// Strict takes only what encoding gives back byte for byte: members
	// in the type's order, every one present, strings the encoder
	// leaves as they are, canonical numbers and base64.
	Strict bool
}

// Next passes c when it is at B[I].
func (d *Reader) Next(c byte) bool {
	if d.I < len(d.B) && d.B[d.I] == c {
		d.I++
		return true
	}
	return false
}

// At reports whether c is at B[I].
func (d *Reader) At(c byte) bool { return d.I < len(d.B) && d.B[d.I] == c }

// Plain returns the contents of the string at b[i]: ASCII without escapes
// or control characters (and, when strict, without the characters the
// encoder escapes as HTML).
func (d *Reader) Plain() ([]byte, bool) {
	if !d.Next('"') {
		return nil, false
	}
	start := d.I
	if !d.Strict {
		for d.I+8 <= len(d.B) && !special8(binary.LittleEndian.Uint64(d.B[d.I:])) {
			d.I += 8
		}
	}
	for d.I < len(d.B) {
		c := d.B[d.I]
		switch {
		case c == '"':
			s := d.B[start:d.I]
			d.I++
			return s, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		case d.Strict && (c == '<' || c == '>' || c == '&'):
			return nil, false
		}
		d.I++
	}
	return nil, false
}

// Str reads a plain string into s.
func (d *Reader) Str(s *string) bool {
	b, ok := d.Plain()
	*s = string(b)
	return ok
}

// Key reads a member name and its colon.
func (d *Reader) Key() ([]byte, bool) {
	k, ok := d.Plain()
	return k, ok && d.Next(':')
}

// U64 reads a number of decimal digits that fits in 64 bits, without a
// leading zero, then expects the end of the value.
func (d *Reader) U64(v *uint64) bool {
	start := d.I
	var n uint64
	for d.I < len(d.B) && d.B[d.I] >= '0' && d.B[d.I] <= '9' {
		c := uint64(d.B[d.I] - '0')
		if n > (1<<64-1-c)/10 {
			return false
		}
		n = n*10 + c
		d.I++
	}
	digits := d.I - start
	if digits == 0 || digits > 1 && d.B[start] == '0' || d.I < len(d.B) && !isEnd(d.B[d.I]) {
		return false
	}
	*v = n
	return true
}

// isEnd reports whether c may follow a number in compact JSON.
func isEnd(c byte) bool { return c == ',' || c == '}' || c == ']' }

// Bool reads true or false.
func (d *Reader) Bool(v *bool) bool {
	switch {
	case bytes.HasPrefix(d.B[d.I:], []byte("true")):
		*v, d.I = true, d.I+4
	case bytes.HasPrefix(d.B[d.I:], []byte("false")):
		*v, d.I = false, d.I+5
	default:
		return false
	}
	return true
}

// Base64 reads a []byte, a string of standard base64 (when strict, the
// one encoding gives back).
func (d *Reader) Base64(v *[]byte) bool {
	s, ok := d.Plain()
	if !ok {
		return false
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(out, s)
	if err != nil {
		return false
	}
	*v = out[:n]
	if d.Strict && base64.StdEncoding.EncodedLen(n) != len(s) {
		return false
	}
	if d.Strict && n > 0 {
		// Non-zero padding bits decode too, and encode otherwise.
		var last [4]byte
		base64.StdEncoding.Encode(last[:], (*v)[n-(n-1)%3-1:])
		if !bytes.Equal(last[:], s[len(s)-4:]) {
			return false
		}
	}
	return true
}

// List reads an array, item by item; [] is an empty list, not nil, as the
// general decoder makes it.
func List[T any](d *Reader, v *[]T, item func(*T) bool) bool {
	if !d.Next('[') {
		return false
	}
	out := []T{}
	if d.Next(']') {
		*v = out
		return true
	}
	for {
		out = append(out, *new(T))
		if !item(&out[len(out)-1]) {
			return false
		}
		if d.Next(']') {
			*v = out
			return true
		}
		if !d.Next(',') {
			return false
		}
	}
}

// Object reads an object whose members member takes by name, in any
// order (in strict, in order), each at most once (strict: exactly once);
// names holds them in the type's order.
func (d *Reader) Object(names []string, member func(i int) bool) bool {
	if !d.Next('{') {
		return false
	}
	var seen uint64
	if d.Next('}') {
		return !d.Strict || len(names) == 0
	}
	for n := 0; ; n++ {
		k, ok := d.Key()
		if !ok {
			return false
		}
		i := indexOf(names, k)
		if i < 0 || seen&(1<<i) != 0 || d.Strict && i != n {
			return false
		}
		seen |= 1 << i
		if !member(i) {
			return false
		}
		if d.Next('}') {
			return !d.Strict || n+1 == len(names)
		}
		if !d.Next(',') {
			return false
		}
	}
}

// indexOf is the position of k in names, -1 when it is not there.
func indexOf(names []string, k []byte) int {
	for i, n := range names {
		if n == string(k) {
			return i
		}
	}
	return -1
}

// General decodes the value at b[i] with the general decoder into v: the
// part of another shape; false when it refuses it (the chunk then goes
// to the general decoder whole, for its error).
func (d *Reader) General(start int, v any) bool {
	end, err := jsonobject.SkipValue(d.B, start)
	if err != nil {
		return false
	}
	d.I = end
	return fastjson.Unmarshal(d.B[start:end], v) == nil
}

// special8 reports whether any of the 8 bytes of x is not plain in a
// string: '"', '\\', a control character or a byte of 0x80 or more ("has
// a zero byte" and "has a byte less than n" bit tricks).
func special8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	control := (x - ones*0x20) &^ x
	return (x|control|(quote-ones)&^quote|(backslash-ones)&^backslash)&highs != 0
}

// Raw passes the value at B[I] and keeps it in *v as it came (a slice of
// B). It does not validate the value: B must be valid JSON (a part of a
// document its scan validated), which it only frames.
func (d *Reader) Raw(v *json.RawMessage) bool {
	end := skipValid(d.B, d.I)
	if end < 0 {
		return false
	}
	*v, d.I = d.B[d.I:end:end], end
	return true
}

// skipValid returns the offset past the valid compact value at b[i], -1
// when b ends first.
func skipValid(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipValidString(b, i)
	case '{', '[':
	default:
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
			i++
		}
		return i
	}
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i = skipValidString(b, i)
			if i < 0 {
				return -1
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return -1
}

// skipValidString returns the offset past the valid string at b[i], -1
// when b ends first.
func skipValidString(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i++
	for {
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			quote, backslash := x^(ones*'"'), x^(ones*'\\')
			if ((quote-ones)&^quote|(backslash-ones)&^backslash)&highs != 0 {
				break
			}
			i += 8
		}
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			i += 2
		default:
			i++
		}
	}
}
