package jsonobject

import (
	"encoding/json"
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
	n, end, err := parseValue(doc, skipSpace(doc, 0), 0)
	if err != nil {
		return nil, err
	}
	return n, spaced.trailing(doc, end)
}

// parseValue reads the value at b[at], which depth containers enclose,
// into a tree, and returns it and the offset past it.
func parseValue(b []byte, at, depth int) (*Node, int, error) {
	if at >= len(b) || (b[at] != '{' && b[at] != '[') {
		end, err := skipValue(b, at, spaced, depth)
		if err != nil {
			return nil, 0, err
		}
		return &Node{raw: b[at:end]}, end, nil
	}
	if err := nest(at, depth); err != nil {
		return nil, 0, err
	}
	n := &Node{kind: b[at]}
	add := func(at int) (int, error) {
		v, end, err := parseValue(b, skipSpace(b, at), depth+1)
		n.members = append(n.members, v)
		return end, err
	}
	var end int
	var err error
	if n.kind == '[' {
		end, err = scanArray(b, at, spaced, add)
	} else {
		end, err = scanMembers(b, at, spaced, func(key []byte, name string, at int) (int, error) {
			n.names, n.keys = append(n.names, name), append(n.keys, key)
			return add(at)
		})
	}
	if err != nil {
		return nil, 0, err
	}
	return n, end, nil
}
