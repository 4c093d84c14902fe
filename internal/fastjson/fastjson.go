// Package fastjson is the one place Nearline chooses the codec of its typed
// JSON views: github.com/goccy/go-json, which decodes and encodes as
// encoding/json does (the same struct tags, json.RawMessage, Marshaler and
// Unmarshaler methods, case-insensitive member names for typed fields,
// escapes and field order) at several times its speed. A mainnet block
// document carries thousands of receipts and actions, decoded by near's
// views inside their UnmarshalJSON methods and by docsource's document
// decoding (docsource's BenchmarkDecodeRealDocument measures both).
//
// Structure whose bytes must be kept exactly (a document taken apart, a
// member's raw value) is not decoded here but scanned by jsonobject.
package fastjson

import gojson "github.com/goccy/go-json"

// Unmarshal decodes data into v as encoding/json.Unmarshal does.
func Unmarshal(data []byte, v any) error {
	return gojson.Unmarshal(data, v)
}

// Marshal encodes v as encoding/json.Marshal does.
func Marshal(v any) ([]byte, error) {
	return gojson.Marshal(v)
}
