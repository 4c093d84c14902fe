package near

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/nearline/nearline/internal/jsonobject"
)

// eachMember walks the members of a JSON object as slices of it.
func eachMember(raw []byte, fn func(name string, value []byte) error) error {
	return jsonobject.Each(raw, func(name string, value json.RawMessage) error { return fn(name, value) })
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
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return data
	}
	first := trimmed[0]
	switch {
	case t.Kind() == reflect.Struct && first == '{':
		named, ok := fields[t]
		if !ok {
			named = jsonFields(t)
			fields[t] = named
		}
		return rebuild(data, '{', '}', eachMember, func(name string, value []byte) ([]byte, bool) {
			field, ok := named[name]
			if !ok {
				return nil, false
			}
			return exactMembers(value, field, fields), true
		})
	case t.Kind() == reflect.Map && first == '{':
		return rebuild(data, '{', '}', eachMember, func(_ string, value []byte) ([]byte, bool) {
			return exactMembers(value, t.Elem(), fields), true
		})
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && first == '[':
		items := func(raw []byte, fn func(_ string, item []byte) error) error {
			return jsonobject.EachItem(raw, func(item json.RawMessage) error { return fn("", item) })
		}
		return rebuild(data, '[', ']', items, func(_ string, item []byte) ([]byte, bool) {
			return exactMembers(item, t.Elem(), fields), true
		})
	}
	return data
}

// rebuild walks the object or array data with walk and returns it with
// each member (or item, whose name is "") as keep returns it, dropping those it refuses; data
// itself when keep changed nothing.
func rebuild(data []byte, open, close byte, walk func([]byte, func(name string, value []byte) error) error,
	keep func(name string, value []byte) ([]byte, bool)) []byte {
	type part struct {
		name  string
		value []byte
	}
	var parts []part
	changed := false
	_ = walk(data, func(name string, value []byte) error {
		kept, ok := keep(name, value)
		if !ok {
			changed = true
			return nil
		}
		if len(kept) != len(value) || (len(kept) > 0 && &kept[0] != &value[0]) {
			changed = true
		}
		parts = append(parts, part{name, kept})
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
		if open == '{' {
			quoted, _ := json.Marshal(p.name) // a string always encodes
			out.Write(quoted)
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
