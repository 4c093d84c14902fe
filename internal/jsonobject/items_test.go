package jsonobject

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEachAndItemsHandOutSlices(t *testing.T) {
	t.Parallel()
	type member struct{ name, value string }
	var got []member
	raw := []byte(" {\"a\" : [1, {\"x\":\"}]\"}] ,\"b\\u0063\":\"q\\\"\",\"a\":null, \"d\":-1.5e3 }\n")
	require.NoError(t, Each(raw, func(name string, value json.RawMessage) error {
		got = append(got, member{name, string(value)})
		return nil
	}))
	require.Equal(t, []member{{"a", `[1, {"x":"}]"}]`}, {"bc", `"q\""`}, {"a", "null"}, {"d", "-1.5e3"}}, got)

	items, err := Items([]byte(`[ {"a":[1,2]}, "x]", true ,[] ]`))
	require.NoError(t, err)
	require.Equal(t, []json.RawMessage{[]byte(`{"a":[1,2]}`), []byte(`"x]"`), []byte("true"), []byte("[]")}, items)
	items, err = Items([]byte(` [ ] `))
	require.NoError(t, err)
	require.Empty(t, items)

	none := func(string, json.RawMessage) error { return nil }
	require.Error(t, Each([]byte(`[1]`), none))
	require.Error(t, Each([]byte(`{"a":`), none))
	_, err = Items([]byte(`{}`))
	require.Error(t, err)
	_, err = Items([]byte(`[1,`))
	require.Error(t, err)
	_, err = Items([]byte(`[1] x`))
	require.Error(t, err)

	// Nesting as deep as encoding/json allows (10,000 levels) is walked.
	deep := `{"a":` + strings.Repeat("[", 9_000) + strings.Repeat("]", 9_000) + `,"b":1}`
	var names []string
	require.NoError(t, Each([]byte(deep), func(name string, _ json.RawMessage) error {
		names = append(names, name)
		return nil
	}))
	require.Equal(t, []string{"a", "b"}, names)
}
