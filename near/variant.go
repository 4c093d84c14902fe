package near

import "encoding/json"

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
