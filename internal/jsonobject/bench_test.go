package jsonobject_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/internal/jsonobject"
)

// blockView is a real block view (a testnet `block` answer's result) as it
// was served, indented, and compacted.
func blockView(b testing.TB) (indented, compact []byte) {
	var rec struct {
		Response struct {
			Result json.RawMessage `json:"result"`
		} `json:"response"`
	}
	if err := json.Unmarshal(fixture.Read(b, "rpc/block/testnet-187310138-by-height.json"), &rec); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, rec.Response.Result); err != nil {
		b.Fatal(err)
	}
	return rec.Response.Result, buf.Bytes()
}

// BenchmarkMembers takes a block view apart into its members, and each
// chunk header of it, as the answers' readers do.
func BenchmarkMembers(b *testing.B) {
	indented, compact := blockView(b)
	for name, raw := range map[string][]byte{"indented": indented, "compact": compact} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				members, err := jsonobject.Members(raw)
				if err != nil {
					b.Fatal(err)
				}
				for _, m := range members {
					if m.Key != "chunks" {
						continue
					}
					err := jsonobject.EachItem(m.Value, func(item json.RawMessage) error {
						return jsonobject.Each(item, func(string, json.RawMessage) error { return nil })
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
