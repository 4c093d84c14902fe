package jsonobject_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/jsonobject"
)

const doc = ` {"b": 1.50, "a" : {"x": [1, 2 ,"s"]}, "c\u0041":"<&>", "d":null} `

func TestMembersKeepOrderAndBytes(t *testing.T) {
	t.Parallel()
	members, err := jsonobject.Members([]byte(doc))
	require.NoError(t, err)
	require.Equal(t, []jsonobject.Member{
		{Key: "b", RawKey: []byte(`"b"`), Value: json.RawMessage(`1.50`)},
		{Key: "a", RawKey: []byte(`"a"`), Value: json.RawMessage(`{"x": [1, 2 ,"s"]}`)},
		{Key: "cA", RawKey: []byte(`"c\u0041"`), Value: json.RawMessage(`"<&>"`)},
		{Key: "d", RawKey: []byte(`"d"`), Value: json.RawMessage(`null`)},
	}, members)

	// Written back: compact between members, keys and values as they came;
	// the key of a member made in code as encoding/json writes a string.
	require.Equal(t, `{"b":1.50,"a":{"x": [1, 2 ,"s"]},"c\u0041":"<&>","d":null}`, string(jsonobject.Object(members)))
	require.Equal(t, `{"\u003ck\u003e":1}`, string(jsonobject.Object([]jsonobject.Member{{Key: "<k>", Value: json.RawMessage(`1`)}})))
	require.Equal(t, `{}`, string(jsonobject.Object(nil)))
}

func TestMembersRefuseWhatIsNotAnObject(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{``, `[]`, `"s"`, `{"a":1`, `{"a" 1}`, `{"a":1,}`, `{"a":tru}`, `{"a":1} x`, `{a:1}`} {
		_, err := jsonobject.Members([]byte(bad))
		require.Error(t, err, bad)
	}
	members, err := jsonobject.Members([]byte("{ }\n"))
	require.NoError(t, err)
	require.Empty(t, members)
}

func TestFilterKeepsAcceptedMembers(t *testing.T) {
	t.Parallel()
	out, err := jsonobject.Filter([]byte(doc), func(key string) bool { return key != "a" })
	require.NoError(t, err)
	require.Equal(t, `{"b":1.50,"cA":"<&>","d":null}`, string(out))
	out, err = jsonobject.Filter([]byte(doc), func(string) bool { return false })
	require.NoError(t, err)
	require.Equal(t, `{}`, string(out))
	for _, bad := range []string{"", "null", "[]", `{"a"`} {
		_, err = jsonobject.Filter([]byte(bad), func(string) bool { return true })
		require.Error(t, err, "%q is not an object: an error, not a panic", bad)
	}
}

func TestJoinAndArray(t *testing.T) {
	t.Parallel()
	require.Equal(t, `{"a":1,"b":2,"c":3}`, string(jsonobject.Join([]byte(`{"a":1}`), nil, []byte(` {} `), []byte(`{"b":2,"c":3}`))))
	require.Equal(t, `{}`, string(jsonobject.Join()))
	require.Equal(t, `[1,{"a":2},"s"]`, string(jsonobject.Array([]json.RawMessage{json.RawMessage(`1`), json.RawMessage(`{"a":2}`), json.RawMessage(`"s"`)})))
	require.Equal(t, `[]`, string(jsonobject.Array(nil)))
}

func TestParseRoundTripsAndEdits(t *testing.T) {
	t.Parallel()
	n, err := jsonobject.Parse([]byte(doc))
	require.NoError(t, err)
	require.Equal(t, `{"b":1.50,"a":{"x":[1,2,"s"]},"c\u0041":"<&>","d":null}`, string(n.AppendJSON(nil)),
		"whitespace between tokens dropped, keys and scalars as they came")
	require.True(t, n.Has("a", "b"))
	require.False(t, n.Has("a", "z"))
	require.Equal(t, "<&>", n.Member("cA").Text())
	require.Equal(t, "1.50", n.Member("b").Text())
	require.True(t, n.Member("a").Member("x").IsArray())

	n.InsertAfter("b", "new", jsonobject.Scalar(`true`))
	n.AppendMember("last", jsonobject.NewObject())
	n.ReplaceMember("d", "e", jsonobject.Scalar(`0`))
	require.Equal(t, []string{"b", "new", "a", "cA", "e", "last"}, n.Names())
	require.Equal(t, `{"b":1.50,"new":true,"a":{"x":[1,2,"s"]},"c\u0041":"<&>","e":0,"last":{}}`, string(n.AppendJSON(nil)))

	for _, bad := range []string{``, `{"a":1`, `[1,]`, `{"a":1} 2`, `nul`} {
		_, err := jsonobject.Parse([]byte(bad))
		require.Error(t, err, bad)
	}
}

// FuzzMembersMatchesEncodingJSON holds Members to encoding/json: on every
// document encoding/json reads as an object, the same members in the same
// order with the same value bytes.
func FuzzMembersMatchesEncodingJSON(f *testing.F) {
	for _, seed := range []string{doc, `{}`, `{"a":{"b":{"c":[]}},"a":2}`, `{"k\"q":"v\\"}`, `{"é":"\u00e9"}`, ` [1] `} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var want []jsonobject.Member
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(in), &obj) != nil || obj == nil {
			return
		}
		dec := json.NewDecoder(strings.NewReader(in))
		_, _ = dec.Token()
		for dec.More() {
			tok, _ := dec.Token()
			var v json.RawMessage
			require.NoError(t, dec.Decode(&v))
			want = append(want, jsonobject.Member{Key: tok.(string), Value: v})
		}
		got, err := jsonobject.Members([]byte(in))
		require.NoError(t, err)
		require.Equal(t, len(want), len(got))
		for i := range want {
			require.Equal(t, want[i].Key, got[i].Key)
			require.Equal(t, string(want[i].Value), string(got[i].Value))
		}
	})
}
