package rpcserve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/near"
)

// nearcore still accepts the positional params older clients send; these
// rewrite them into the named form the near.Parse* functions read. Anything
// else is returned unchanged (and rejected there with a PARSE_ERROR).

// positional returns the elements of params when it is a JSON array, as
// slices of it.
func positional(params json.RawMessage) ([]json.RawMessage, bool) {
	trimmed := bytes.TrimSpace(params)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return nil, false
	}
	items, err := jsonobject.Items(trimmed)
	return items, err == nil
}

// blockParams rewrites `block`'s [block_id] into {"block_id": ...}.
func blockParams(params json.RawMessage) json.RawMessage {
	items, ok := positional(params)
	if !ok || len(items) != 1 {
		return params
	}
	out, err := json.Marshal(map[string]json.RawMessage{"block_id": items[0]})
	if err != nil {
		return params
	}
	return out
}

// chunkParams rewrites `chunk`'s [chunk_id] into {"chunk_id": ...} and
// [[block_id, shard_id]] into {"block_id": ..., "shard_id": ...}.
func chunkParams(params json.RawMessage) json.RawMessage {
	items, ok := positional(params)
	if !ok || len(items) != 1 {
		return params
	}
	if pair, ok := positional(items[0]); ok {
		if len(pair) != 2 {
			return params
		}
		out, err := json.Marshal(map[string]json.RawMessage{"block_id": pair[0], "shard_id": pair[1]})
		if err != nil {
			return params
		}
		return out
	}
	out, err := json.Marshal(map[string]json.RawMessage{"chunk_id": items[0]})
	if err != nil {
		return params
	}
	return out
}

// maxLegacyQueryData is nearcore's limit on a path-style query's path plus
// decoded data.
const maxLegacyQueryData = 10 * 1024

// queryParams rewrites the soft-deprecated path-style `query` params,
// [path, base58 data], into the named form: "account/<id>",
// "access_key/<id>[/<public key>]", "code/<id>", "contract/<id>" (data is
// the key prefix) or "call/<id>/<method>" (data is the args), at the
// optimistic (latest) block as nearcore does. Other params pass unchanged.
func queryParams(params json.RawMessage) (json.RawMessage, *near.Error) {
	items, ok := positional(params)
	if !ok || len(items) != 2 {
		return params, nil
	}
	var path, data string
	if json.Unmarshal(items[0], &path) != nil || json.Unmarshal(items[1], &data) != nil {
		return params, nil
	}
	raw, err := near.Base58DecodeMax(data, maxLegacyQueryData)
	switch {
	case errors.Is(err, near.ErrBase58TooLong):
		return nil, near.ParseError(fmt.Sprintf("Query data size is too large: more than %d bytes", maxLegacyQueryData))
	case err != nil:
		return nil, near.ParseError("Failed parsing args: the query data is not base58")
	}
	if n := len(path) + len(raw); n > maxLegacyQueryData {
		return nil, near.ParseError(fmt.Sprintf("Query data size %d is too large", n))
	}
	parts := strings.SplitN(path, "/", 3)
	if len(parts) < 2 {
		return nil, near.ParseError("Not enough query parameters provided")
	}
	fields := map[string]any{"account_id": parts[1], "finality": near.FinalityOptimistic}
	extra, hasExtra := "", len(parts) == 3
	if hasExtra {
		extra = parts[2]
	}
	switch parts[0] {
	case "account":
		fields["request_type"] = near.QueryViewAccount
	case "access_key":
		fields["request_type"] = near.QueryViewAccessKeyList
		if hasExtra {
			if !near.ValidPublicKey(extra) {
				return nil, near.ParseError("Invalid public key")
			}
			fields["request_type"], fields["public_key"] = near.QueryViewAccessKey, extra
		}
	case "code":
		fields["request_type"] = near.QueryViewCode
	case "contract":
		fields["request_type"], fields["prefix_base64"] = near.QueryViewState, base64.StdEncoding.EncodeToString(raw)
	case "call":
		if !hasExtra {
			return nil, near.ParseError("Method name is missing")
		}
		fields["request_type"], fields["method_name"] = near.QueryCallFunction, extra
		fields["args_base64"] = base64.StdEncoding.EncodeToString(raw)
	default:
		return nil, near.ParseError("Unknown path " + parts[0])
	}
	out, merr := json.Marshal(fields)
	if merr != nil {
		return nil, near.ParseError("Failed parsing args: could not read the query path")
	}
	return out, nil
}
