package rpcserve

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/nearline/nearline/near"
)

func queryMethod(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
	params, perr := queryParams(params)
	if perr != nil {
		return nil, perr
	}
	result, err := query(ctx, b, params)
	// nearcore answers a missing access key with a success-shaped result
	// for the legacy `query` method.
	if legacy, ok := legacyQuery(err); ok {
		return legacy, nil
	}
	return result, err
}

// viewMethod answers an EXPERIMENTAL_view_* / EXPERIMENTAL_call_function
// method: query's params without request_type, and no legacy results.
func viewMethod(requestType string) methodFunc {
	return func(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
		withType, perr := withMember(params, "request_type", mustJSON(requestType))
		if perr != nil {
			return nil, perr
		}
		return query(ctx, b, withType)
	}
}

// query parses params as a `query` request and asks the Backend. A
// request type no Backend answers is a ForwardError (forwarded, or
// QueryNotServed); no result is errNoResult.
func query(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
	req, perr := near.ParseQueryRequest(params)
	if perr != nil {
		return nil, perr
	}
	if isUpstreamQuery(req.RequestType) {
		return nil, &ForwardError{Reason: QueryNotServed(req.RequestType)}
	}
	result, err := b.Query(ctx, req)
	if err == nil && result == nil {
		return nil, errNoResult
	}
	return result, err
}

// withMember returns the params object with the member name: value added
// last, so that it wins over a member of that name the params already
// have (the last of a repeated name wins). params are valid JSON: a member
// of a request body that was.
func withMember(params json.RawMessage, name string, value json.RawMessage) (json.RawMessage, *near.Error) {
	trimmed := bytes.TrimSpace(params)
	if len(trimmed) < 2 || trimmed[0] != '{' {
		return nil, near.ParseError("Failed parsing args: params must be an object")
	}
	body := trimmed[:len(trimmed)-1] // without the closing brace
	out := make([]byte, 0, len(trimmed)+len(name)+len(value)+4)
	out = append(out, body...)
	if len(bytes.TrimSpace(body[1:])) > 0 {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, name...)
	out = append(out, `":`...)
	out = append(out, value...)
	return append(out, '}'), nil
}
