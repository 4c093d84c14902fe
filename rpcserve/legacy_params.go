package rpcserve

import (
	"bytes"
	"encoding/json"
)

// nearcore still accepts the positional params older clients send; these
// rewrite them into the named form the near.Parse* functions read. Anything
// else is returned unchanged (and rejected there with a PARSE_ERROR).

// positional returns the elements of params when it is a JSON array.
func positional(params json.RawMessage) ([]json.RawMessage, bool) {
	trimmed := bytes.TrimSpace(params)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return nil, false
	}
	var items []json.RawMessage
	if json.Unmarshal(trimmed, &items) != nil {
		return nil, false
	}
	return items, true
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
