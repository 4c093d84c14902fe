package rpcserve

import (
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/internal/rpctest"
)

// nearcoreMethods returns every method of nearcore's OpenRPC description and
// of its 1.2.2 OpenAPI description (whose paths are method names), sorted.
func nearcoreMethods(t *testing.T) []string {
	t.Helper()
	var openrpc struct {
		Methods []struct {
			Name string `json:"name"`
		} `json:"methods"`
	}
	require.NoError(t, json.Unmarshal(fixture.Read(t, "openapi/nearcore-openrpc.json"), &openrpc))
	var openapi struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(fixture.Read(t, "openapi/nearcore-openapi-1.2.2-progenitor-fixed.json"), &openapi))
	set := map[string]bool{}
	for _, m := range openrpc.Methods {
		set[m.Name] = true
	}
	for p := range openapi.Paths {
		set[strings.TrimPrefix(p, "/")] = true
	}
	methods := slices.Sorted(maps.Keys(set))
	require.GreaterOrEqual(t, len(methods), 40, "the OpenRPC and OpenAPI files name at least 40 methods")
	return methods
}

// nearcoreQueryTypes returns the `query` request types of nearcore's 1.2.2
// OpenAPI description (RpcQueryRequest's request_type enums).
func nearcoreQueryTypes(t *testing.T) []string {
	t.Helper()
	var openapi struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(fixture.Read(t, "openapi/nearcore-openapi-1.2.2-progenitor-fixed.json"), &openapi))
	schema := openapi.Components.Schemas["RpcQueryRequest"]
	require.NotEmpty(t, schema, "RpcQueryRequest schema")
	re := regexp.MustCompile(`"request_type":\s*\{\s*"enum":\s*\[\s*"([a-z_]+)"`)
	set := map[string]bool{}
	for _, m := range re.FindAllSubmatch(schema, -1) {
		set[string(m[1])] = true
	}
	types := slices.Sorted(maps.Keys(set))
	require.GreaterOrEqual(t, len(types), 10, "RpcQueryRequest names at least 10 request types")
	return types
}

// queryParams holds a well-formed `query` params object for each request type.
func queryParamsFor(requestType string) map[string]any {
	p := map[string]any{"request_type": requestType, "finality": "final", "account_id": "alice.near"}
	switch requestType {
	case "view_access_key", "view_gas_key":
		p["public_key"] = "ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847"
	case "view_state":
		p["prefix_base64"] = ""
	case "call_function":
		p["method_name"], p["args_base64"] = "get", ""
	case "view_global_contract_code":
		delete(p, "account_id")
		p["code_hash"] = fakeHash("code", 1)
	}
	return p
}

type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Name  string `json:"name"`
		Cause struct {
			Name string `json:"name"`
		} `json:"cause"`
		Data json.RawMessage `json:"data"`
	} `json:"error"`
}

func ask(t *testing.T, h http.Handler, method string, params any) rpcAnswer {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	require.NoError(t, err)
	rec := post(t, h, "/", string(body))
	require.Equal(t, http.StatusOK, rec.Code, "%s: HTTP status", method)
	var a rpcAnswer
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &a), "%s: %s", method, rec.Body.String())
	return a
}

func notMissing(t *testing.T, what string, a rpcAnswer) {
	t.Helper()
	if a.Error == nil {
		return
	}
	require.NotEqual(t, "METHOD_NOT_FOUND", a.Error.Cause.Name, "%s: nearcore has it, so it is never METHOD_NOT_FOUND", what)
	require.NotContains(t, string(a.Error.Data), "unknown variant", "%s: nearcore has it, so it is never an unknown variant", what)
}

// TestEveryNearcoreMethodIsAnsweredForwardedOrRefused sends every method of
// nearcore's OpenRPC and OpenAPI descriptions, and every `query` request
// type: without an upstream each is answered or clearly refused (never
// METHOD_NOT_FOUND or "unknown variant"); with one, each that the archive
// does not answer reaches the upstream.
func TestEveryNearcoreMethodIsAnsweredForwardedOrRefused(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	alone := newTestHandler(t, &fakeBackend{}, Config{}, logger)
	forwarding := newTestHandler(t, &fakeBackend{}, Config{Forward: rpctest.EchoUpstream(t)}, logger)
	table := methodTable()

	for _, method := range nearcoreMethods(t) {
		_, answered := table[method]
		require.True(t, answered || isUpstreamMethod(method), "%s is neither in the method table nor forwarded", method)
		a := ask(t, alone, method, map[string]any{})
		notMissing(t, method, a)
		if !answered {
			require.NotNil(t, a.Error, "%s without an upstream", method)
			require.Equal(t, "NOT_SERVED", a.Error.Cause.Name, "%s without an upstream", method)
			f := ask(t, forwarding, method, map[string]any{})
			require.Nil(t, f.Error, "%s is forwarded", method)
			require.Contains(t, string(f.Result), "upstream_saw", "%s reaches the upstream", method)
		}
	}

	for _, typ := range nearcoreQueryTypes(t) {
		params := queryParamsFor(typ)
		a := ask(t, alone, "query", params)
		notMissing(t, "query "+typ, a)
		if isUpstreamQuery(typ) {
			require.NotNil(t, a.Error, "query %s without an upstream", typ)
			require.Equal(t, "NOT_SERVED", a.Error.Cause.Name, "query %s without an upstream", typ)
			require.Contains(t, string(a.Error.Data), typ)
			f := ask(t, forwarding, "query", params)
			require.Nil(t, f.Error, "query %s is forwarded", typ)
			require.Contains(t, string(f.Result), typ, "query %s reaches the upstream with its request type", typ)
		}
	}
}
