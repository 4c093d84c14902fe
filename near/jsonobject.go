package near

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// FilterObject returns the JSON object raw with only the members whose key
// keep accepts, in their order and byte for byte as they were.
func FilterObject(raw json.RawMessage, keep func(key string) bool) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("read key: %w", err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("want a key, got %v", tok)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("read value of %s: %w", name, err)
		}
		if !keep(name) {
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		k, err := json.Marshal(name)
		if err != nil {
			return nil, fmt.Errorf("encode key %s: %w", name, err)
		}
		out.Write(k)
		out.WriteByte(':')
		out.Write(value)
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
