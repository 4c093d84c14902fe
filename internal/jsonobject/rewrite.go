package jsonobject

import (
	"bytes"
	"fmt"
)

// Rewrite copies the JSON document doc byte for byte, each scalar (a
// string with its quotes, a number, true, false or null) replaced by what
// visit returns for it, or kept when visit returns nil: whitespace, member
// order, member names and every kept token stay as they were. Member names
// are not visited; they are the path.
//
// visit is called in document order with the path leading to the scalar:
// for each enclosing object the name of the member, decoded as Members
// decodes names (so "a\u0062" is the element "ab"), and for each enclosing
// array "#"; a scalar that is the whole document has an empty path. The
// path is valid only during the call.
//
// doc is validated as Parse validates it (what json.Valid accepts); an
// invalid document is an error and visit may have been called for the
// scalars before the fault. The result never shares memory with doc.
func Rewrite(doc []byte, visit func(path []string, tok []byte) []byte) ([]byte, error) {
	w := rewriter{doc: doc, visit: visit, names: map[string]string{}}
	end, err := w.value(skipSpace(doc, 0), 0)
	if err != nil {
		return nil, err
	}
	if err := spaced.trailing(doc, end); err != nil {
		return nil, err
	}
	if w.out == nil {
		return bytes.Clone(doc), nil
	}
	return append(w.out, doc[w.copied:]...), nil
}

// rewriter is one Rewrite under way: out holds doc[:copied] rewritten.
type rewriter struct {
	doc    []byte
	visit  func(path []string, tok []byte) []byte
	path   []string
	names  map[string]string // member names met, quoted -> decoded
	out    []byte            // nil until the first replacement
	copied int
}

// value rewrites the value at doc[at], which depth containers enclose, and
// returns the offset past it.
func (w *rewriter) value(at, depth int) (int, error) {
	b := w.doc
	if at >= len(b) || (b[at] != '{' && b[at] != '[') {
		end, err := skipValue(b, at, spaced, depth)
		if err != nil {
			return 0, err
		}
		if r := w.visit(w.path, b[at:end]); r != nil {
			w.replace(at, end, r)
		}
		return end, nil
	}
	if err := nest(at, depth); err != nil {
		return 0, err
	}
	last := len(w.path)
	w.path = append(w.path, "#")
	item := func(at int) (int, error) { return w.value(skipSpace(b, at), depth+1) }
	var end int
	var err error
	if b[at] == '[' {
		end, err = scanArray(b, at, spaced, item)
	} else {
		end, err = scanObject(b, at, spaced, func(key []byte, at int) (int, error) {
			name, err := w.name(key)
			if err != nil {
				return 0, err
			}
			w.path[last] = name
			return item(at)
		})
	}
	w.path = w.path[:last]
	return end, err
}

// replace writes r in place of doc[start:end].
func (w *rewriter) replace(start, end int, r []byte) {
	if w.out == nil {
		w.out = make([]byte, 0, len(w.doc)+len(w.doc)/64)
	}
	w.out = append(w.out, w.doc[w.copied:start]...)
	w.out = append(w.out, r...)
	w.copied = end
}

// name returns the member name key (quoted, as a scan passed it) decoded,
// each distinct name decoded once: a document repeats few names many times.
func (w *rewriter) name(key []byte) (string, error) {
	if name, ok := w.names[string(key)]; ok {
		return name, nil
	}
	name, err := Unquote(key)
	if err != nil {
		return "", fmt.Errorf("member name %s: %w", key, err)
	}
	w.names[string(key)] = name
	return name, nil
}
