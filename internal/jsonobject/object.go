package jsonobject

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Member is one member of a JSON object: its name, decoded, and its value
// byte for byte as it came.
type Member struct {
	Key   string
	Value json.RawMessage
}

// errNotObject is the error of a document that is not a JSON object.
var errNotObject = errors.New("want a JSON object")

// Members returns the members of the JSON object raw in their order, each
// value byte for byte (whitespace inside it kept). The values are slices of
// raw.
func Members(raw []byte) ([]Member, error) {
	var out []Member
	err := Each(raw, func(key string, value json.RawMessage) error {
		out = append(out, Member{key, value})
		return nil
	})
	return out, err
}

// Each calls fn with each member of the JSON object raw in turn, the value
// byte for byte (a slice of raw); an error from fn ends the walk and is
// returned.
func Each(raw []byte, fn func(key string, value json.RawMessage) error) error {
	p := &parser{doc: raw}
	return p.walk('{', '}', errNotObject, func() error {
		key, name, err := p.key()
		if err != nil {
			return err
		}
		p.space()
		start := p.pos
		if err := p.skip(0); err != nil {
			return fmt.Errorf("value of %s: %w", key, err)
		}
		return fn(name, p.doc[start:p.pos])
	})
}

// walk reads p's document, which must be one object or array (opening ...
// closing, else errNot) and nothing after it, calling item to read each
// member or element from p in turn; an error from item ends the walk and
// is returned.
func (p *parser) walk(opening, closing byte, errNot error, item func() error) error {
	p.space()
	if !p.at(opening) {
		return errNot
	}
	if p.enter(closing) {
		return p.end()
	}
	for {
		if err := item(); err != nil {
			return err
		}
		if done, err := p.next(closing); err != nil {
			return err
		} else if done {
			return p.end()
		}
	}
}

// Filter returns the JSON object raw with only the members whose key keep
// accepts, in their order and byte for byte as they were.
func Filter(raw []byte, keep func(key string) bool) (json.RawMessage, error) {
	out := make([]byte, 1, len(raw))
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

// Object returns the object of members, in their order: each key encoded as
// encoding/json encodes a string, each value as it is.
func Object(members []Member) json.RawMessage {
	return AppendObject(nil, members)
}

// AppendObject appends Object(members) to dst.
func AppendObject(dst []byte, members []Member) []byte {
	dst = append(dst, '{')
	for _, m := range members {
		dst = appendMember(dst, m.Key, m.Value)
	}
	return append(dst, '}')
}

// Array returns the array of items, each as it is.
func Array(items []json.RawMessage) json.RawMessage {
	out := []byte{'['}
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	return append(out, ']')
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

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

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
	p := &parser{doc: raw}
	return p.walk('[', ']', errNotArray, func() error {
		p.space()
		start := p.pos
		if err := p.skip(0); err != nil {
			return err
		}
		return fn(p.doc[start:p.pos])
	})
}
