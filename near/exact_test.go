package near

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUnmarshalExactMatchesNamesAsSerde(t *testing.T) {
	t.Parallel()
	type key struct {
		AccountID string `json:"account_id"`
	}
	type params struct {
		Method string `json:"method"`
		Keys   []key  `json:"keys"`
		ByName map[string]key
		Ptr    *key    `json:"ptr"`
		ID     BlockID `json:"id"`
	}
	for _, c := range []struct {
		name, in string
		want     params
	}{
		{"exact names decode", `{"method":"a","keys":[{"account_id":"x"}],"ByName":{"k":{"account_id":"y"}},"ptr":{"account_id":"z"},"id":5}`,
			params{Method: "a", Keys: []key{{"x"}}, ByName: map[string]key{"k": {"y"}}, Ptr: &key{"z"}, ID: HeightID(5)}},
		{"another case is ignored", `{"method":"nosuch","METHOD":"gas_price","Method":"x"}`, params{Method: "nosuch"}},
		{"only another case: not set", `{"METHOD":"gas_price"}`, params{}},
		{"nested: ignored at every depth", `{"keys":[{"Account_Id":"x"},{"account_id":"y"}],"ptr":{"ACCOUNT_ID":"z"},"bYnAME":{}}`,
			params{Keys: []key{{}, {"y"}}, Ptr: &key{}}},
		{"Unicode folding (the Kelvin sign) is no match", "{\"ByName\":{},\"\u212aeys\":[{\"account_id\":\"x\"}]}", params{ByName: map[string]key{}}},
		{"escaped names are the name", `{"m\u0065thod":"a"}`, params{Method: "a"}},
		{"a repeated name: the last wins", `{"method":"a","method":"b"}`, params{Method: "b"}},
		{"map keys are kept as they are", `{"ByName":{"K":{"account_id":"y","Account_id":"n"}}}`, params{ByName: map[string]key{"K": {"y"}}}},
	} {
		var got params
		require.NoError(t, UnmarshalExact([]byte(c.in), &got), c.name)
		require.Equal(t, c.want, got, c.name)
	}
	var p params
	var syn *json.SyntaxError
	require.ErrorAs(t, UnmarshalExact([]byte(`{"method":`), &p), &syn)
	var typ *json.UnmarshalTypeError
	require.ErrorAs(t, UnmarshalExact([]byte(`{"method":1}`), &p), &typ)
}

func TestParamsNamesAreCaseSensitive(t *testing.T) {
	t.Parallel()
	_, perr := ParseBlockReference(json.RawMessage(`{"Finality":"final"}`))
	require.NotNil(t, perr, "a case-folded finality must not select a block")
	ref, perr := ParseBlockReference(json.RawMessage(`{"block_id":3,"BLOCK_ID":"x"}`))
	require.Nil(t, perr)
	require.Equal(t, uint64(3), ref.BlockID.Height)
	q, perr := ParseQueryRequest(json.RawMessage(`{"REQUEST_TYPE":"call_function","request_type":"view_account","Account_Id":"evil.near","account_id":"a.near","finality":"final"}`))
	require.Nil(t, perr)
	require.Equal(t, QueryViewAccount, q.RequestType)
	require.Equal(t, "a.near", q.AccountID)
	id, perr := ParseGasPriceRequest(json.RawMessage(`{"Block_Id":5}`))
	require.Nil(t, perr)
	require.Nil(t, id, "a case-folded block_id is not a block id")
}

func TestErrorsClipEchoedInput(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("a", 5<<20)
	for name, params := range map[string]string{
		"account id":    `{"request_type":"view_account","account_id":"` + huge + `","finality":"final"}`,
		"request type":  `{"request_type":"` + huge + `","account_id":"a.near","finality":"final"}`,
		"finality":      `{"request_type":"view_account","account_id":"a.near","finality":"` + huge + `"}`,
		"block hash":    `{"request_type":"view_account","account_id":"a.near","block_id":"` + huge + `"}`,
		"block height":  `{"request_type":"view_account","account_id":"a.near","block_id":1` + strings.Repeat("0", 1<<20) + `}`,
		"public key":    `{"request_type":"view_access_key","account_id":"a.near","public_key":"ed25519:` + huge + `","finality":"final"}`,
		"number values": `{"request_type":"view_account","account_id":1` + strings.Repeat("0", 1<<20) + `}`,
	} {
		_, perr := ParseQueryRequest(json.RawMessage(params))
		require.NotNil(t, perr, name)
		out, err := json.Marshal(perr)
		require.NoError(t, err)
		require.Less(t, len(out), 2*MaxEcho+1024, "%s: a %d-byte error", name, len(out))
	}
	require.Len(t, MethodNotFound(huge).Data, MaxEcho+len(`"…"`))
	require.Equal(t, "é", Clip("é"))
	cut := Clip(strings.Repeat("x", MaxEcho-1) + "é")
	require.Equal(t, strings.Repeat("x", MaxEcho-1)+"…", cut, "cut before a character, never inside it")
}

func TestUnmarshalExactPromotedFields(t *testing.T) {
	t.Parallel()
	type Inner struct {
		A string `json:"a"`
	}
	type outer struct {
		*Inner
		B string `json:"b"`
	}
	var got outer
	require.NoError(t, UnmarshalExact([]byte(`{"a":"x","A":"y","b":"z","Inner":{"a":"w"}}`), &got))
	require.Equal(t, "x", got.A, "a promoted field keeps its exact name")
	require.Equal(t, "z", got.B)
}

// TestLongBlockIDsFailAsTheyWouldWhole: block_id's text is kept only up to
// the longest height or hash there is, and the error is the same as for
// the whole text.
func TestLongBlockIDsFailAsTheyWouldWhole(t *testing.T) {
	t.Parallel()
	for _, long := range []string{`"` + strings.Repeat("z", 1<<20) + `"`, "1" + strings.Repeat("0", 1<<20), strings.Repeat("[", 5000) + strings.Repeat("]", 5000)} {
		var whole BlockID
		wholeErr := whole.UnmarshalJSON([]byte(long))
		require.Error(t, wholeErr)
		_, err := ParseBlockReference(json.RawMessage(`{"block_id":` + long + `}`))
		perr, ok := errors.AsType[*Error](err)
		require.True(t, ok, "a *Error: %v", err)
		var msg string
		require.NoError(t, json.Unmarshal(perr.Data, &msg))
		require.Equal(t, "Failed parsing args: "+wholeErr.Error(), msg)
		_, err = ParseChunkRequest(json.RawMessage(`{"block_id":` + long + `,"shard_id":0}`))
		require.ErrorAs(t, err, &perr)
		_, err = ParseGasPriceRequest(json.RawMessage(`[` + long + `]`))
		require.ErrorAs(t, err, &perr)
	}
	ref, err := ParseBlockReference(json.RawMessage(`{"block_id":"\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031"}`))
	require.NoError(t, err, "a hash written with escapes is still a hash")
	require.Equal(t, "11111111111111111111111111111111", ref.BlockID.Hash)
}

// TestClipCountsEscapes: an echo is clipped by the bytes its JSON text
// takes, so characters encoding/json escapes to six bytes (&, <, >,
// control characters) cannot make a clipped echo six times MaxEcho (the
// fuzzer found a 2,064-byte error from a path of 256 '&').
func TestClipCountsEscapes(t *testing.T) {
	t.Parallel()
	for _, in := range []string{strings.Repeat("&", 1000), strings.Repeat("\x01", 1000), strings.Repeat("é", 1000), strings.Repeat(`"`, 1000)} {
		text, err := json.Marshal(Clip(in))
		require.NoError(t, err)
		require.LessOrEqual(t, len(text), MaxEcho+len(`""`)+len("…"), "%q…", in[:4])
	}
	require.Equal(t, "plain", Clip("plain"))
	require.Equal(t, strings.Repeat("a", MaxEcho)+"…", Clip(strings.Repeat("a", MaxEcho+1)))
}
