package near

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Walking JSON text without decoding it: members and items are handed out
// as slices of the text (no copies), which is how the request envelope and
// params are read. Every walker needs valid JSON (json.Valid) and works
// iteratively, so the depth of the input costs no stack.

var errNotObject = errors.New("want a JSON object")

// EachMember calls fn with the name (unescaped) and the value of every
// member of the JSON object raw, in order; value is the slice of raw that
// holds it. A repeated name is handed out each time. It returns fn's error,
// or an error when raw is not a valid JSON object.
func EachMember(raw []byte, fn func(name string, value []byte) error) error {
	if !json.Valid(raw) {
		return errNotObject
	}
	return eachMember(raw, func(quoted, value []byte) error {
		name, err := unquote(quoted)
		if err != nil {
			return err
		}
		return fn(name, value)
	})
}

// ArrayItems returns the elements of the JSON array raw, in order, each as
// the slice of raw that holds it (an empty array gives an empty slice),
// or an error when raw is not a valid JSON array.
func ArrayItems(raw []byte) ([]json.RawMessage, error) {
	if !json.Valid(raw) {
		return nil, errors.New("want a JSON array")
	}
	items := []json.RawMessage{}
	err := eachItem(raw, func(item []byte) error {
		items = append(items, item)
		return nil
	})
	return items, err
}

// eachMember is EachMember over valid JSON, with each name as its quoted
// text.
func eachMember(raw []byte, fn func(quoted, value []byte) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return errNotObject
	}
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] != '}' {
		nameEnd := stringEnd(raw, i)
		quoted := raw[i:nameEnd]
		start := skipSpace(raw, skipSpace(raw, nameEnd)+1) // past the ':'
		end := valueEnd(raw, start)
		if err := fn(quoted, raw[start:end]); err != nil {
			return err
		}
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return nil
}

// eachItem calls fn with each element of the array raw, valid JSON.
func eachItem(raw []byte, fn func(item []byte) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return errors.New("want a JSON array")
	}
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] != ']' {
		end := valueEnd(raw, i)
		if err := fn(raw[i:end]); err != nil {
			return err
		}
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string that starts at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && !endsLiteral(b[j]) {
		j++
	}
	return j
}

// endsLiteral reports whether c ends a number, true, false or null.
func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

func unquote(quoted []byte) (string, error) {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", fmt.Errorf("read member name: %w", err)
	}
	return s, nil
}

// UnmarshalExact is json.Unmarshal with the member names of nearcore's
// serde: a member fills a struct field only when its name is the field's
// JSON name exactly, at every depth (encoding/json also takes the name in
// any other case, so {"METHOD": ...} would fill `method`). Members of any
// other name are ignored, as unknown members are; of a repeated name the
// last wins, as when serde_json reads params into a Value first. Types with
// their own UnmarshalJSON see their JSON unchanged.
func UnmarshalExact(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || !json.Valid(data) {
		return json.Unmarshal(data, v) // its error
	}
	return json.Unmarshal(exactMembers(data, t.Elem(), map[reflect.Type]map[string]reflect.Type{}), v)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// exactMembers returns data, valid JSON for a value of type t, without the
// members that no field of t's structs names exactly; data itself when
// nothing is left out. fields caches jsonFields by type.
func exactMembers(data []byte, t reflect.Type, fields map[reflect.Type]map[string]reflect.Type) []byte {
	t = indirect(t)
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return data
	}
	i := skipSpace(data, 0)
	if i >= len(data) {
		return data
	}
	switch {
	case t.Kind() == reflect.Struct && data[i] == '{':
		named, ok := fields[t]
		if !ok {
			named = jsonFields(t)
			fields[t] = named
		}
		return rebuild(data, '{', '}', eachMember, func(quoted, value []byte) ([]byte, bool) {
			name, err := unquote(quoted)
			field, ok := named[name]
			if err != nil || !ok {
				return nil, false
			}
			return exactMembers(value, field, fields), true
		})
	case t.Kind() == reflect.Map && data[i] == '{':
		return rebuild(data, '{', '}', eachMember, func(_, value []byte) ([]byte, bool) {
			return exactMembers(value, t.Elem(), fields), true
		})
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && data[i] == '[':
		items := func(raw []byte, fn func(_, item []byte) error) error {
			return eachItem(raw, func(item []byte) error { return fn(nil, item) })
		}
		return rebuild(data, '[', ']', items, func(_, item []byte) ([]byte, bool) {
			return exactMembers(item, t.Elem(), fields), true
		})
	}
	return data
}

// rebuild walks the object or array data with walk and returns it with
// each member (or item) as keep returns it, dropping those it refuses; data
// itself when keep changed nothing.
func rebuild(data []byte, open, close byte, walk func([]byte, func(quoted, value []byte) error) error,
	keep func(quoted, value []byte) ([]byte, bool)) []byte {
	type part struct{ quoted, value []byte }
	var parts []part
	changed := false
	_ = walk(data, func(quoted, value []byte) error {
		kept, ok := keep(quoted, value)
		if !ok {
			changed = true
			return nil
		}
		if len(kept) != len(value) || (len(kept) > 0 && &kept[0] != &value[0]) {
			changed = true
		}
		parts = append(parts, part{quoted, kept})
		return nil
	})
	if !changed {
		return data
	}
	var out bytes.Buffer
	out.WriteByte(open)
	for k, p := range parts {
		if k > 0 {
			out.WriteByte(',')
		}
		if p.quoted != nil {
			out.Write(p.quoted)
			out.WriteByte(':')
		}
		out.Write(p.value)
	}
	out.WriteByte(close)
	return out.Bytes()
}

// jsonFields maps the JSON name of every field encoding/json fills in a
// struct of type t (promoted fields included) to the field's type.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-":
			continue
		case f.Anonymous && name == "" && indirect(f.Type).Kind() == reflect.Struct:
			continue // its fields are promoted, and listed on their own
		case !f.IsExported() && !f.Anonymous:
			continue
		case name == "":
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}

func indirect(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// FilterObject returns the JSON object raw with only the members whose key
// keep accepts, in their order and byte for byte as they were.
func FilterObject(raw json.RawMessage, keep func(key string) bool) (json.RawMessage, error) {
	var out bytes.Buffer
	out.WriteByte('{')
	err := EachMember(raw, func(name string, value []byte) error {
		if !keep(name) {
			return nil
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		k, err := json.Marshal(name)
		if err != nil {
			return fmt.Errorf("encode key %s: %w", name, err)
		}
		out.Write(k)
		out.WriteByte(':')
		out.Write(value)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// VariantName names a serde-tagged enum value as nearcore encodes one: the
// string of a unit variant ("FullAccess"), or the single key of an object
// ({"FunctionCall": {...}}); "" for anything else.
func VariantName(raw json.RawMessage) string {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		return name
	}
	var tagged map[string]json.RawMessage
	if json.Unmarshal(raw, &tagged) == nil && len(tagged) == 1 {
		for k := range tagged {
			return k
		}
	}
	return ""
}
