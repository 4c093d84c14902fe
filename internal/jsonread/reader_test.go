package jsonread

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/nearline/nearline/internal/jsonobject"
)

// FuzzSkipValidAgreesWithTheScan: on valid compact JSON, skipValid ends
// a value where jsonobject's validating scan ends it.
func FuzzSkipValidAgreesWithTheScan(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x\\"]}",{"b":null}],"c":"\u00e9"}`, `"a\\\\"`, `[[],{}]`, `-1.5e3`, `true`, `"` + string(bytes.Repeat([]byte("ab\\\""), 9)) + `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			return
		}
		b := append(buf.Bytes(), ']')
		want, err := jsonobject.SkipValue(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := skipValid(b, 0); got != want {
			t.Fatalf("skipValid(%s) = %d, want %d", b, got, want)
		}
	})
}
