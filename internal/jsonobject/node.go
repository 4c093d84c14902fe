package jsonobject

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Node is one JSON value kept in document order: an object's members in
// the order they came, an array's items, or a scalar's exact text. Rewriting
// a document through a Node reorders no member and re-encodes no number or
// string.
type Node struct {
	kind    byte     // '{' object, '[' array, 0 scalar
	raw     []byte   // a scalar's text, as it came
	names   []string // an object's member names, decoded
	keys    [][]byte // an object's member names, as they came (quoted)
	members []*Node  // an object's member values or an array's items
}

// Scalar returns a node holding the JSON text raw (a string with its
// quotes, a number, true, false or null).
func Scalar(raw string) *Node { return &Node{raw: []byte(raw)} }

// NewObject returns an empty object; AppendMember fills it.
func NewObject() *Node { return &Node{kind: '{'} }

// IsObject reports whether n is an object.
func (n *Node) IsObject() bool { return n.kind == '{' }

// IsArray reports whether n is an array.
func (n *Node) IsArray() bool { return n.kind == '[' }

// Items returns an array's items, or an object's member values, in order.
func (n *Node) Items() []*Node { return n.members }

// Names returns an object's member names, in order.
func (n *Node) Names() []string { return n.names }

// Member returns the value of the object member name, or nil.
func (n *Node) Member(name string) *Node {
	if n.kind != '{' {
		return nil
	}
	if i := slices.Index(n.names, name); i >= 0 {
		return n.members[i]
	}
	return nil
}

// Has reports whether n is an object with every one of names.
func (n *Node) Has(names ...string) bool {
	for _, name := range names {
		if n.Member(name) == nil {
			return false
		}
	}
	return n.kind == '{'
}

// InsertAfter inserts the member name: value after the member after (at the
// end when n has no such member).
func (n *Node) InsertAfter(after, name string, value *Node) {
	at := len(n.names)
	if i := slices.Index(n.names, after); i >= 0 {
		at = i + 1
	}
	n.names = slices.Insert(n.names, at, name)
	n.keys = slices.Insert(n.keys, at, appendKey(nil, name))
	n.members = slices.Insert(n.members, at, value)
}

// AppendMember adds the member name: value at the end of n.
func (n *Node) AppendMember(name string, value *Node) {
	n.names, n.keys, n.members = append(n.names, name), append(n.keys, appendKey(nil, name)), append(n.members, value)
}

// ReplaceMember puts name: value in the place of the member old (nothing
// when n has no such member).
func (n *Node) ReplaceMember(old, name string, value *Node) {
	if i := slices.Index(n.names, old); i >= 0 && n.kind == '{' {
		n.names[i], n.keys[i], n.members[i] = name, appendKey(nil, name), value
	}
}

// Text returns the value of a JSON string scalar, or the raw text of any
// other scalar.
func (n *Node) Text() string {
	var s string
	if n.kind == 0 && json.Unmarshal(n.raw, &s) == nil {
		return s
	}
	return string(n.raw)
}

// AppendJSON appends n's compact encoding to out.
func (n *Node) AppendJSON(out []byte) []byte {
	switch n.kind {
	case '{':
		out = append(out, '{')
		for i, key := range n.keys {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, key...)
			out = append(out, ':')
			out = n.members[i].AppendJSON(out)
		}
		return append(out, '}')
	case '[':
		out = append(out, '[')
		for i, item := range n.members {
			if i > 0 {
				out = append(out, ',')
			}
			out = item.AppendJSON(out)
		}
		return append(out, ']')
	}
	return append(out, n.raw...)
}

// Parse reads one JSON document into a tree. Whitespace between tokens is
// dropped; everything else is kept as it came.
func Parse(doc []byte) (*Node, error) {
	p := &parser{doc: doc}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	return n, p.end()
}

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

// parser reads a JSON document byte by byte: the one tokenizer behind
// Parse, Each and Filter.
type parser struct {
	doc []byte
	pos int
}

var errEnd = errors.New("parse JSON: unexpected end")

func (p *parser) space() {
	for p.pos < len(p.doc) && isSpace(p.doc[p.pos]) {
		p.pos++
	}
}

// end checks that only whitespace follows the value read.
func (p *parser) end() error {
	p.space()
	if p.pos != len(p.doc) {
		return fmt.Errorf("parse JSON: text after the value at byte %d", p.pos)
	}
	return nil
}

func (p *parser) value(depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, errors.New("parse JSON: nested too deep")
	}
	p.space()
	if p.pos >= len(p.doc) {
		return nil, errEnd
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
		return &Node{raw: s}, nil
	}
	raw, err := p.scalar()
	if err != nil {
		return nil, err
	}
	return &Node{raw: raw}, nil
}

// skip reads one value without building it.
func (p *parser) skip(depth int) error {
	if depth > maxDepth {
		return errors.New("parse JSON: nested too deep")
	}
	p.space()
	if p.pos >= len(p.doc) {
		return errEnd
	}
	switch c := p.doc[p.pos]; c {
	case '{', '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		if p.enter(closing) {
			return nil
		}
		for {
			if c == '{' {
				if _, _, err := p.key(); err != nil {
					return err
				}
			}
			if err := p.skip(depth + 1); err != nil {
				return err
			}
			if done, err := p.next(closing); err != nil || done {
				return err
			}
		}
	case '"':
		_, err := p.str()
		return err
	}
	_, err := p.scalar()
	return err
}

// scalar reads a number, true, false or null.
func (p *parser) scalar() ([]byte, error) {
	start := p.pos
	for p.pos < len(p.doc) {
		c := p.doc[p.pos]
		if c == ',' || c == '}' || c == ']' || c == ':' || isSpace(c) {
			break
		}
		p.pos++
	}
	raw := p.doc[start:p.pos]
	if !json.Valid(raw) {
		return nil, fmt.Errorf("parse JSON: bad value %q at byte %d", raw, start)
	}
	return raw, nil
}

// str reads a string token, quotes included.
func (p *parser) str() ([]byte, error) {
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
	return nil, errEnd
}

// key reads a member name and the ':' after it: the name as it came
// (quoted) and decoded.
func (p *parser) key() (raw []byte, name string, err error) {
	p.space()
	if !p.at('"') {
		return nil, "", fmt.Errorf("parse JSON: want a member name at byte %d", p.pos)
	}
	if raw, err = p.str(); err != nil {
		return nil, "", err
	}
	if name, err = decodeKey(raw); err != nil {
		return nil, "", fmt.Errorf("parse JSON: member name at byte %d: %w", p.pos, err)
	}
	p.space()
	if !p.at(':') {
		return nil, "", fmt.Errorf("parse JSON: want ':' at byte %d", p.pos)
	}
	p.pos++
	return raw, name, nil
}

// decodeKey decodes a quoted member name: plain ASCII without escapes as
// it is, anything else through encoding/json.
func decodeKey(raw []byte) (string, error) {
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			var name string
			err := json.Unmarshal(raw, &name)
			return name, err
		}
	}
	return string(inner), nil
}

func (p *parser) object(depth int) (*Node, error) {
	n := &Node{kind: '{'}
	if p.enter('}') {
		return n, nil
	}
	for {
		key, name, err := p.key()
		if err != nil {
			return nil, err
		}
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

func (p *parser) array(depth int) (*Node, error) {
	n := &Node{kind: '['}
	if p.enter(']') {
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

// at reports whether the byte at p.pos is c.
func (p *parser) at(c byte) bool {
	return p.pos < len(p.doc) && p.doc[p.pos] == c
}

// enter consumes the opening delimiter of an object or array (at p.pos)
// and the whitespace after it, and reports whether the container is
// empty: closing follows, and is consumed too.
func (p *parser) enter(closing byte) (empty bool) {
	p.pos++
	p.space()
	if p.at(closing) {
		p.pos++
		return true
	}
	return false
}

// next reads the ',' between items or the closing delimiter.
func (p *parser) next(closing byte) (done bool, err error) {
	p.space()
	if p.pos >= len(p.doc) {
		return false, errEnd
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
