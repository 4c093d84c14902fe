package near

import (
	"bytes"
	"encoding/json"

	"github.com/nearline/nearline/internal/jsonobject"
)

// tagMember is a member of a tagged enum's object: its name and its value,
// a slice of the object's bytes.
type tagMember struct {
	name string
	body json.RawMessage
}

// tags returns the members of a tagged enum's object as a decoder fills a
// map (a repeated name keeps its first place and its last value): one
// scan, no copy of the variant's body, and no map for the one member an
// enum has.
func tags(data []byte) ([]tagMember, error) {
	var members []tagMember
	err := jsonobject.Each(data, func(key string, value json.RawMessage) error {
		for i := range members {
			if members[i].name == key {
				members[i].body = value
				return nil
			}
		}
		members = append(members, tagMember{key, value})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return members, nil
}

// isObject reports whether the JSON value data is an object (a value
// that decodes into no string).
func isObject(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '{'
}

// plainString returns the contents of the JSON string data when it has
// no escapes, as decoding it would; ok is false for anything else.
func plainString(data []byte) (s string, ok bool) {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return "", false
	}
	inner := data[1 : len(data)-1]
	for _, c := range inner {
		if c == '\\' || c == '"' || c < 0x20 {
			return "", false
		}
	}
	return string(inner), true
}
