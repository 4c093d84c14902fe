package jsonobject_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/jsonobject"
)

// stringsSeeds are logs as outcomes carry them and texts of every other
// shape Strings leaves to encoding/json.
var stringsSeeds = []string{
	`[]`, `["a"]`, `["Transfer 5 from a.near to b.near",""]`,
	`["EVENT_JSON:{\"standard\":\"nep141\",\"version\":\"1.0.0\",\"event\":\"ft_transfer\",\"data\":[{\"old_owner_id\":\"a\",\"new_owner_id\":\"b\",\"amount\":\"1\"}]}"]`,
	`["a\\b\/c\bd\fe\nf\rg\th"]`, `["\u00e9"]`, `["é"]`, `["\ud800"]`, "[\"\xff\"]", `["a",1]`, `[ "a"]`, `null`,
	`["a"`, `{"a":"b"}`, `["\x"]`, "[\"a\x01\"]", `["a"] `, ``, `"a"`,
}

// TestStringsDecodesAsEncodingJSON: Strings gives encoding/json's values
// and errors for every seed.
func TestStringsDecodesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range stringsSeeds {
		assertStringsAsEncodingJSON(t, s)
	}
}

// FuzzStringsAgreesWithEncodingJSON: Strings gives encoding/json's values
// and errors for any text.
func FuzzStringsAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range stringsSeeds {
		f.Add(s)
	}
	f.Fuzz(assertStringsAsEncodingJSON)
}

func assertStringsAsEncodingJSON(t *testing.T, raw string) {
	var want []string
	wantErr := json.Unmarshal([]byte(raw), &want)
	got, err := jsonobject.Strings([]byte(raw))
	if wantErr != nil {
		require.EqualError(t, err, wantErr.Error(), raw)
		return
	}
	require.NoError(t, err, raw)
	require.Equal(t, want, got, raw)
	require.Equal(t, want == nil, got == nil, raw)
}
