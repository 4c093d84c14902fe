package rpcserve

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/near"
)

func queryMethod(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
	params, perr := queryParams(params)
	if perr != nil {
		return nil, perr
	}
	req, perr := near.ParseQueryRequest(params)
	if perr != nil {
		return nil, perr
	}
	if isUpstreamQuery(req.RequestType) {
		return nil, &ForwardError{Reason: QueryNotServed(req.RequestType)}
	}
	result, err := b.Query(ctx, req)
	if err != nil {
		// nearcore answers a missing access key with a success-shaped
		// result for the legacy `query` method.
		if legacy, ok := legacyQuery(err); ok {
			return legacy, nil
		}
		return nil, err
	}
	if result == nil {
		return nil, errNoResult
	}
	return result, nil
}

// viewMethod answers an EXPERIMENTAL_view_* / EXPERIMENTAL_call_function
// method: query's params without request_type, and no legacy results.
func viewMethod(requestType string) methodFunc {
	return func(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
		var fields map[string]json.RawMessage
		if perr := near.DecodeParams(params, &fields); perr != nil {
			return nil, perr
		}
		fields["request_type"] = mustJSON(requestType)
		withType, err := json.Marshal(fields)
		if err != nil {
			return nil, fmt.Errorf("encode %s params: %w", requestType, err)
		}
		req, perr := near.ParseQueryRequest(withType)
		if perr != nil {
			return nil, perr
		}
		if isUpstreamQuery(req.RequestType) {
			return nil, &ForwardError{Reason: QueryNotServed(req.RequestType)}
		}
		result, err := b.Query(ctx, req)
		if err != nil {
			return nil, err
		}
		if result == nil {
			return nil, errNoResult
		}
		return result, nil
	}
}
