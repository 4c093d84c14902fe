package near

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/nearline/nearline/internal/jsonobject"
)

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
		return rebuild(data, true, func(name string, value []byte) ([]byte, bool) {
			field, ok := named[name]
			if !ok {
				return nil, false
			}
			return exactMembers(value, field, fields), true
		})
	case t.Kind() == reflect.Map && first == '{':
		return rebuild(data, true, func(_ string, value []byte) ([]byte, bool) {
			return exactMembers(value, t.Elem(), fields), true
		})
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && first == '[':
		return rebuild(data, false, func(_ string, item []byte) ([]byte, bool) {
			return exactMembers(item, t.Elem(), fields), true
		})
	}
	return data
}

// rebuild returns the object (or, not object, the array) data with each
// member (or item, whose name is "") as keep returns it, dropping those it
// refuses; data itself when keep changed nothing. A rebuilt object is
// compact, each name written as encoding/json writes the decoded name.
func rebuild(data []byte, object bool, keep func(name string, value []byte) ([]byte, bool)) []byte {
	var members []jsonobject.Member
	changed := false
	add := func(name string, value json.RawMessage) error {
		kept, ok := keep(name, value)
		switch {
		case !ok:
			changed = true
			return nil
		case len(kept) != len(value) || (len(kept) > 0 && &kept[0] != &value[0]):
			changed = true
		}
		members = append(members, jsonobject.Member{Key: name, Value: kept})
		return nil
	}
	if object {
		_ = jsonobject.Each(data, add)
	} else {
		_ = jsonobject.EachItem(data, func(item json.RawMessage) error { return add("", item) })
	}
	switch {
	case !changed:
		return data
	case object:
		return jsonobject.Object(members) // no RawKey: each name as encoding/json encodes it
	}
	items := make([]json.RawMessage, len(members))
	for i, m := range members {
		items[i] = m.Value
	}
	return jsonobject.Array(items)
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
