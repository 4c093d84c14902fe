package sim

import (
	"encoding/json"
	"errors"
	"fmt"
)

// jsonNode is one JSON value kept in document order: an object's members in
// the order they came, an array's items, or a scalar's exact text. It is
// what the nearcore-next rewrite works on, so that no member is reordered
// and no number or string is re-encoded.
type jsonNode struct {
	kind    byte        // '{' object, '[' array, 0 scalar
	raw     []byte      // a scalar's text, as it came
	names   []string    // an object's member names, decoded
	keys    [][]byte    // an object's member names, as they came (quoted)
	members []*jsonNode // an object's member values or an array's items
}

// member returns the value of the object member name, or nil.
func (n *jsonNode) member(name string) *jsonNode {
	if n.kind != '{' {
		return nil
	}
	for i, k := range n.names {
		if k == name {
			return n.members[i]
		}
	}
	return nil
}

// has reports whether n is an object with every one of names.
func (n *jsonNode) has(names ...string) bool {
	for _, name := range names {
		if n.member(name) == nil {
			return false
		}
	}
	return n.kind == '{'
}

// insertAfter inserts the member name: value after the member after (at the
// end when n has no such member).
func (n *jsonNode) insertAfter(after, name string, value *jsonNode) {
	at := len(n.names)
	for i, k := range n.names {
		if k == after {
			at = i + 1
			break
		}
	}
	key, _ := json.Marshal(name) // a Go string always encodes
	n.names = append(n.names[:at:at], append([]string{name}, n.names[at:]...)...)
	n.keys = append(n.keys[:at:at], append([][]byte{key}, n.keys[at:]...)...)
	n.members = append(n.members[:at:at], append([]*jsonNode{value}, n.members[at:]...)...)
}

// appendMember adds the member name: value at the end of n.
func (n *jsonNode) appendMember(name string, value *jsonNode) {
	key, _ := json.Marshal(name) // a Go string always encodes
	n.names, n.keys, n.members = append(n.names, name), append(n.keys, key), append(n.members, value)
}

// scalar returns a node holding the JSON text raw.
func scalar(raw string) *jsonNode { return &jsonNode{raw: []byte(raw)} }

// text returns the value of a JSON string scalar, or its raw text for any
// other scalar.
func (n *jsonNode) text() string {
	var s string
	if n.kind == 0 && json.Unmarshal(n.raw, &s) == nil {
		return s
	}
	return string(n.raw)
}

// parseJSON reads one JSON document. Whitespace between tokens is dropped;
// everything else is kept as it came.
func parseJSON(doc []byte) (*jsonNode, error) {
	p := &jsonParser{doc: doc}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.doc) {
		return nil, fmt.Errorf("parse JSON: text after the value at byte %d", p.pos)
	}
	return n, nil
}

// maxJSONDepth bounds nesting, as encoding/json does.
const maxJSONDepth = 10000

type jsonParser struct {
	doc []byte
	pos int
}

var errJSONEnd = errors.New("parse JSON: unexpected end")

func (p *jsonParser) space() {
	for p.pos < len(p.doc) {
		switch p.doc[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (*jsonNode, error) {
	if depth > maxJSONDepth {
		return nil, errors.New("parse JSON: nested too deep")
	}
	p.space()
	if p.pos >= len(p.doc) {
		return nil, errJSONEnd
	}
	switch p.doc[p.pos] {
	case '{':
		return p.object(depth)
	case '[':
		return p.array(depth)
	case '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &jsonNode{raw: s}, nil
	}
	start := p.pos
	for p.pos < len(p.doc) {
		c := p.doc[p.pos]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		p.pos++
	}
	raw := p.doc[start:p.pos]
	if !json.Valid(raw) {
		return nil, fmt.Errorf("parse JSON: bad value %q at byte %d", raw, start)
	}
	return &jsonNode{raw: raw}, nil
}

// str reads a string token, quotes included.
func (p *jsonParser) str() ([]byte, error) {
	start := p.pos
	p.pos++ // opening quote
	for p.pos < len(p.doc) {
		switch p.doc[p.pos] {
		case '\\':
			p.pos += 2
		case '"':
			p.pos++
			return p.doc[start:p.pos], nil
		default:
			p.pos++
		}
	}
	return nil, errJSONEnd
}

func (p *jsonParser) object(depth int) (*jsonNode, error) {
	n := &jsonNode{kind: '{'}
	p.pos++ // {
	p.space()
	if p.pos < len(p.doc) && p.doc[p.pos] == '}' {
		p.pos++
		return n, nil
	}
	for {
		p.space()
		if p.pos >= len(p.doc) || p.doc[p.pos] != '"' {
			return nil, fmt.Errorf("parse JSON: want a member name at byte %d", p.pos)
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		var name string
		if err := json.Unmarshal(key, &name); err != nil {
			return nil, fmt.Errorf("parse JSON: member name at byte %d: %w", p.pos, err)
		}
		p.space()
		if p.pos >= len(p.doc) || p.doc[p.pos] != ':' {
			return nil, fmt.Errorf("parse JSON: want ':' at byte %d", p.pos)
		}
		p.pos++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.names, n.keys, n.members = append(n.names, name), append(n.keys, key), append(n.members, v)
		if done, err := p.next('}'); err != nil || done {
			return n, err
		}
	}
}

func (p *jsonParser) array(depth int) (*jsonNode, error) {
	n := &jsonNode{kind: '['}
	p.pos++ // [
	p.space()
	if p.pos < len(p.doc) && p.doc[p.pos] == ']' {
		p.pos++
		return n, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, v)
		if done, err := p.next(']'); err != nil || done {
			return n, err
		}
	}
}

// next reads the ',' between items or the closing delimiter.
func (p *jsonParser) next(closing byte) (done bool, err error) {
	p.space()
	if p.pos >= len(p.doc) {
		return false, errJSONEnd
	}
	switch p.doc[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case closing:
		p.pos++
		return true, nil
	}
	return false, fmt.Errorf("parse JSON: want ',' or %q at byte %d", closing, p.pos)
}

// appendJSON appends n's compact encoding to out.
func (n *jsonNode) appendJSON(out []byte) []byte {
	switch n.kind {
	case '{':
		out = append(out, '{')
		for i, key := range n.keys {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, key...)
			out = append(out, ':')
			out = n.members[i].appendJSON(out)
		}
		return append(out, '}')
	case '[':
		out = append(out, '[')
		for i, item := range n.members {
			if i > 0 {
				out = append(out, ',')
			}
			out = item.appendJSON(out)
		}
		return append(out, ']')
	}
	return append(out, n.raw...)
}
