package jsonobject

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Member is one member of a JSON object: its name, decoded, the name as it
// came (quoted, escapes kept) when it was read from a text, and its value
// byte for byte as it came.
type Member struct {
	Key    string
	RawKey []byte // nil for a member made in code
	Value  json.RawMessage
}

// errNotObject is the error of a document that is not a JSON object.
var errNotObject = errors.New("want a JSON object")

// Members returns the members of the JSON object raw in their order, each
// value byte for byte (whitespace inside it kept). The values and raw keys
// are slices of raw.
func Members(raw []byte) ([]Member, error) {
	var out []Member
	err := eachMember(raw, func(key []byte, name string, value json.RawMessage) error {
		out = append(out, Member{Key: name, RawKey: key, Value: value})
		return nil
	})
	return out, err
}

// Each calls fn with each member of the JSON object raw in turn, the value
// byte for byte (a slice of raw); an error from fn ends the walk and is
// returned.
func Each(raw []byte, fn func(key string, value json.RawMessage) error) error {
	return eachMember(raw, func(_ []byte, name string, value json.RawMessage) error { return fn(name, value) })
}

// eachMember is Each, handing fn each member's name as it came (quoted) too.
func eachMember(raw []byte, fn func(key []byte, name string, value json.RawMessage) error) error {
	start := skipSpace(raw, 0)
	if start >= len(raw) || raw[start] != '{' {
		return errNotObject
	}
	end, err := scanMembers(raw, start, spaced, func(key []byte, name string, at int) (int, error) {
		at = skipSpace(raw, at)
		end, err := skipValue(raw, at, spaced, 1)
		if err != nil {
			return 0, fmt.Errorf("value of %s: %w", key, err)
		}
		return end, fn(key, name, raw[at:end])
	})
	if err != nil {
		return err
	}
	return spaced.trailing(raw, end)
}

// Filter returns the JSON object raw with only the members whose key keep
// accepts, in their order and byte for byte as they were.
func Filter(raw []byte, keep func(key string) bool) (json.RawMessage, error) {
	out := make([]byte, 1, max(len(raw), 1))
	out[0] = '{'
	err := Each(raw, func(key string, value json.RawMessage) error {
		if keep(key) {
			out = appendMember(out, key, value)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}

// Object returns the object of members, in their order: each key as it
// came (RawKey) or, for a member made in code, encoded as encoding/json
// encodes a string; each value as it is.
func Object(members []Member) json.RawMessage {
	return AppendObject(nil, members)
}

// AppendObject appends Object(members) to dst.
func AppendObject(dst []byte, members []Member) []byte {
	size := 2
	for _, m := range members {
		size += len(m.Key) + len(m.RawKey) + len(m.Value) + 4
	}
	dst = slices.Grow(dst, size)
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		if m.RawKey != nil {
			dst = append(dst, m.RawKey...)
		} else {
			dst = appendKey(dst, m.Key)
		}
		dst = append(dst, ':')
		dst = append(dst, m.Value...)
	}
	return append(dst, '}')
}

// Array returns the array of items, each as it is.
func Array(items []json.RawMessage) json.RawMessage {
	size := 2
	for _, it := range items {
		size += len(it) + 1
	}
	return AppendArray(make([]byte, 0, size), items)
}

// AppendArray appends Array(items) to dst.
func AppendArray(dst []byte, items []json.RawMessage) []byte {
	dst = append(dst, '[')
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, it...)
	}
	return append(dst, ']')
}

// Join returns one JSON object holding the members of each of objs in
// turn, byte for byte; an empty or nil object adds nothing.
func Join(objs ...[]byte) json.RawMessage {
	size := 2
	for _, o := range objs {
		size += len(o)
	}
	out := make([]byte, 1, size)
	out[0] = '{'
	for _, o := range objs {
		o = trimSpace(o)
		if len(o) <= 2 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, o[1:len(o)-1]...)
	}
	return append(out, '}')
}

// appendMember appends `"key":value` to an object being written (after a
// comma unless it is the first member).
func appendMember(dst []byte, key string, value []byte) []byte {
	if dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	dst = appendKey(dst, key)
	dst = append(dst, ':')
	return append(dst, value...)
}

// appendKey appends key as encoding/json encodes a string (HTML characters
// escaped), without its reflection for the plain names JSON-RPC uses.
func appendKey(dst []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(key) // a Go string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"')
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// errNotArray is the error of a document that is not a JSON array.
var errNotArray = errors.New("want a JSON array")

// Items returns the elements of the JSON array raw in their order, each
// byte for byte (a slice of raw); an empty array gives an empty slice.
func Items(raw []byte) ([]json.RawMessage, error) {
	items := []json.RawMessage{}
	err := EachItem(raw, func(item json.RawMessage) error {
		items = append(items, item)
		return nil
	})
	return items, err
}

// EachItem calls fn with each element of the JSON array raw in turn, byte
// for byte (a slice of raw); an error from fn ends the walk and is returned.
func EachItem(raw []byte, fn func(item json.RawMessage) error) error {
	start := skipSpace(raw, 0)
	if start >= len(raw) || raw[start] != '[' {
		return errNotArray
	}
	end, err := scanArray(raw, start, spaced, func(at int) (int, error) {
		at = skipSpace(raw, at)
		end, err := skipValue(raw, at, spaced, 1)
		if err != nil {
			return 0, err
		}
		return end, fn(raw[at:end])
	})
	if err != nil {
		return err
	}
	return spaced.trailing(raw, end)
}
