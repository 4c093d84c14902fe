package near

import (
	"bytes"
	"encoding/json"

	gojson "github.com/goccy/go-json"
	"github.com/nearline/nearline/internal/jsonobject"
)

// unmarshal decodes the members of a view inside its UnmarshalJSON
// methods (receipts, actions, permissions, accounts and keys with extra
// members, byte arrays): github.com/goccy/go-json decodes as encoding/json
// does (the same tags, RawMessage, Unmarshaler methods) at several times
// its speed, which the block documents' thousands of receipts and actions
// per mainnet block need (docsource's BenchmarkDecodeRealDocument).
func unmarshal(data []byte, v any) error {
	return gojson.Unmarshal(data, v)
}

// tags returns the members of a tagged enum's object as a decoder fills a
// map (the last of a repeated name), their values slices of data: one scan,
// no copy of the variant's body.
func tags(data []byte) (map[string]json.RawMessage, error) {
	tagged := map[string]json.RawMessage{}
	err := jsonobject.Each(data, func(key string, value json.RawMessage) error {
		tagged[key] = value
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tagged, nil
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
