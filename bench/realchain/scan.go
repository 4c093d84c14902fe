package realchain

import (
	"errors"
	"fmt"
)

// visit is called for every scalar (string, number, true, false, null) of a
// JSON document with the path of object keys leading to it ("#" for an
// array element) and the token as written (a string with its quotes). It
// returns the bytes to write instead, or nil to keep the token.
type visit func(path []string, tok []byte) []byte

// rewrite copies a JSON document byte for byte, every scalar replaced by
// what f returns for it: whitespace, member order and every token f keeps
// stay as they were. The document must be valid JSON (json.Valid).
func rewrite(doc []byte, f visit) ([]byte, error) {
	out := make([]byte, 0, len(doc)+len(doc)/64)
	type frame struct {
		object  bool
		wantKey bool
	}
	var stack []frame
	var path []string
	for i := 0; i < len(doc); {
		c := doc[i]
		switch c {
		case ' ', '\t', '\n', '\r', ':':
			out = append(out, c)
			i++
			continue
		case '{', '[':
			stack = append(stack, frame{object: c == '{', wantKey: c == '{'})
			path = append(path, "#")
			out = append(out, c)
			i++
			continue
		case '}', ']':
			if len(stack) == 0 {
				return nil, fmt.Errorf("offset %d: unbalanced %q", i, c)
			}
			stack, path = stack[:len(stack)-1], path[:len(path)-1]
			out = append(out, c)
			i++
			continue
		case ',':
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].wantKey = true
			}
			out = append(out, c)
			i++
			continue
		}
		end, err := tokenEnd(doc, i)
		if err != nil {
			return nil, err
		}
		tok := doc[i:end]
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			if c != '"' {
				return nil, fmt.Errorf("offset %d: object key is not a string", i)
			}
			path[len(path)-1] = string(tok[1 : len(tok)-1])
			stack[n-1].wantKey = false
			out = append(out, tok...)
		} else if r := f(path, tok); r != nil {
			out = append(out, r...)
		} else {
			out = append(out, tok...)
		}
		i = end
	}
	if len(stack) != 0 {
		return nil, errors.New("unterminated document")
	}
	return out, nil
}

// tokenEnd returns the offset just past the scalar starting at i.
func tokenEnd(doc []byte, i int) (int, error) {
	if doc[i] == '"' {
		for j := i + 1; j < len(doc); j++ {
			switch doc[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return 0, fmt.Errorf("offset %d: unterminated string", i)
	}
	j := i
	for j < len(doc) {
		switch doc[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, nil
		}
		j++
	}
	return j, nil
}

// hasSuffix reports whether path ends with suffix.
func hasSuffix(path []string, suffix ...string) bool {
	if len(path) < len(suffix) {
		return false
	}
	tail := path[len(path)-len(suffix):]
	for i, s := range suffix {
		if tail[i] != s {
			return false
		}
	}
	return true
}
