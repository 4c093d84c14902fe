package verify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDiff(t *testing.T) {
	t.Parallel()
	result := func(s string) Answer { return Answer{Result: []byte(s)} }
	failure := func(s string) Answer { return Answer{Error: []byte(s)} }
	for _, c := range []struct {
		name          string
		archive, node Answer
		want          *Difference // nil: identical
	}{
		{"same bytes", result(`{"a":1}`), result(`{"a":1}`), nil},
		{"member order and space aside", result(`{"a":1,"b":[true,null]}`), result(`{ "b": [true, null], "a": 1 }`), nil},
		{"scalar", result(`{"header":{"gas_price":"100"}}`), result(`{"header":{"gas_price":"101"}}`),
			&Difference{Path: "result.header.gas_price", Archive: `"100"`, Node: `"101"`}},
		{"numbers compare as their text", result(`{"level":0.0}`), result(`{"level":0}`),
			&Difference{Path: "result.level", Archive: "0.0", Node: "0"}},
		{"big numbers keep every digit", result(`[340282366920938463463374607431768211455]`), result(`[340282366920938463463374607431768211454]`),
			&Difference{Path: "result[0]", Archive: "340282366920938463463374607431768211455", Node: "340282366920938463463374607431768211454"}},
		{"string is not a number", result(`{"n":"1"}`), result(`{"n":1}`), &Difference{Path: "result.n", Archive: `"1"`, Node: "1"}},
		{"member the archive lacks", result(`{"a":1}`), result(`{"a":1,"extra":{"x":2}}`),
			&Difference{Path: "result.extra", Archive: absent, Node: `{"x":2}`}},
		{"member the node lacks", result(`{"a":1,"b":2}`), result(`{"a":1}`), &Difference{Path: "result.b", Archive: "2", Node: absent}},
		{"first difference in member order", result(`{"z":1,"a":1}`), result(`{"z":2,"a":2}`), &Difference{Path: "result.a", Archive: "1", Node: "2"}},
		{"array element", result(`{"chunks":[{"h":1},{"h":2}]}`), result(`{"chunks":[{"h":1},{"h":3}]}`),
			&Difference{Path: "result.chunks[1].h", Archive: "2", Node: "3"}},
		{"shorter array", result(`[1]`), result(`[1,2]`), &Difference{Path: "result[1]", Archive: absent, Node: "2"}},
		{"type", result(`{"a":[]}`), result(`{"a":{}}`), &Difference{Path: "result.a", Archive: "[]", Node: "{}"}},
		{"odd member name", result(`{"a b":1}`), result(`{"a b":2}`), &Difference{Path: `result["a b"]`, Archive: "1", Node: "2"}},
		{"null", result(`{"a":null}`), result(`{"a":false}`), &Difference{Path: "result.a", Archive: "null", Node: "false"}},
		{"errors: same name and cause, other text",
			failure(`{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_BLOCK","info":{}},"code":-32000,"message":"Server error","data":"DB Not Found Error: BLOCK HEIGHT: 5"}`),
			failure(`{"code":-32000,"message":"Server error","data":"Block not found","cause":{"info":{},"name":"UNKNOWN_BLOCK"},"name":"HANDLER_ERROR"}`), nil},
		{"errors: other cause",
			failure(`{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_BLOCK","info":{}}}`),
			failure(`{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_CHUNK","info":{"chunk_hash":"x"}}}`),
			&Difference{Path: "error.cause.info.chunk_hash", Archive: absent, Node: `"x"`}},
		{"errors: other cause info",
			failure(`{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_ACCOUNT","info":{"block_height":5}}}`),
			failure(`{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_ACCOUNT","info":{"block_height":6}}}`),
			&Difference{Path: "error.cause.info.block_height", Archive: "5", Node: "6"}},
		{"result against error", result(`{"a":1}`), failure(`{"name":"HANDLER_ERROR"}`),
			&Difference{Path: "", Archive: `result {"a":1}`, Node: `error {"name":"HANDLER_ERROR"}`}},
		{"error against result", failure(`{"name":"INTERNAL_ERROR"}`), result(`[]`),
			&Difference{Path: "", Archive: `error {"name":"INTERNAL_ERROR"}`, Node: "result []"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, Diff(c.archive, c.node))
		})
	}
}

func TestParseAnswer(t *testing.T) {
	t.Parallel()
	a, err := ParseAnswer([]byte(`{"jsonrpc":"2.0","result":{"x":1},"id":"verify"}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"x":1}`, string(a.Result))
	require.Nil(t, a.Error)

	a, err = ParseAnswer([]byte(`{"jsonrpc":"2.0","error":{"name":"HANDLER_ERROR"},"result":null,"id":"verify"}`))
	require.NoError(t, err)
	require.Nil(t, a.Result)
	require.JSONEq(t, `{"name":"HANDLER_ERROR"}`, string(a.Error))

	// A null result is a result (nearcore answers `null` for some calls).
	a, err = ParseAnswer([]byte(`{"jsonrpc":"2.0","result":null,"error":null,"id":"verify"}`))
	require.ErrorIs(t, err, errNotResponse, "%v", a)

	for _, body := range []string{`<html>502 Bad Gateway</html>`, `{"jsonrpc":"2.0","id":"verify"}`, `{"result":`, ``} {
		_, err := ParseAnswer([]byte(body))
		require.ErrorIs(t, err, errNotResponse, body)
	}
}

func TestDifferenceString(t *testing.T) {
	t.Parallel()
	long := `"é` + strings.Repeat("x", 300) + `"`
	d := &Difference{Path: "result.a", Archive: long, Node: "1"}
	s := d.String()
	require.Contains(t, s, "at result.a: archive \"éxxx")
	require.Contains(t, s, "…, node 1")
	require.Less(t, len(s), 200)
	require.Equal(t, "at answer: archive result [], node error {}", (&Difference{Archive: "result []", Node: "error {}"}).String())
}

func TestRequestKind(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		method string
		params any
		kind   string
	}{
		{"block", map[string]any{"block_id": 5}, "block"},
		{"query", map[string]any{"request_type": "view_account", "account_id": "a.near"}, "query/view_account"},
		{"EXPERIMENTAL_changes", map[string]any{"changes_type": "data_changes"}, "EXPERIMENTAL_changes/data_changes"},
		{"gas_price", []any{5}, "gas_price"},
		{"genesis_config", nil, "genesis_config"},
	} {
		r := NewRequest(c.method, c.params)
		require.Equal(t, c.kind, r.Kind)
		a, err := ParseAnswer([]byte(`{"result":` + string(r.Params) + `}`))
		if c.params != nil {
			require.NoError(t, err)
			require.JSONEq(t, string(r.Params), string(a.Result))
		}
		require.JSONEq(t, `{"jsonrpc":"2.0","id":"verify","method":"`+c.method+`","params":`+string(r.Params)+`}`, string(r.Body()))
	}
}
