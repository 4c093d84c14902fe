package verify

// UnknownHash is the hash PlanConfig.Edges asks blocks, chunks and
// transactions of: no chain has it (sha256 of "nobody has this"). An
// archive forwards what it does not hold, so these go upstream.
const UnknownHash = "ATWgwmXDScaDdg6xAfo33SD6ckwEfmyroVTLuDyrW9J9"

// edgeRequests are PlanConfig.Edges's requests without a height of the
// range: the finality forms, heights past head, hashes no chain has, the
// methods without params, and malformed requests (both servers must
// refuse each alike). account is an account of the chain.
func edgeRequests(head uint64, accounts []string) []Request {
	account := "nobody-here.near"
	if len(accounts) > 0 {
		account = accounts[0]
	}
	past := head + 1000
	reqs := []Request{
		NewRequest("health", nil),
		NewRequest("validators", []any{nil}),
		NewRequest("gas_price", []any{nil}),
		NewRequest("gas_price", map[string]any{}),
		NewRequest("block", map[string]any{"finality": "final"}),
		NewRequest("block", map[string]any{"finality": "near-final"}),
		NewRequest("block", map[string]any{"finality": "optimistic"}),
		NewRequest("query", map[string]any{"request_type": "view_account", "account_id": account, "finality": "final"}),
		NewRequest("EXPERIMENTAL_protocol_config", map[string]any{"finality": "final"}),
		NewRequest("block", map[string]any{"block_id": UnknownHash}),
		NewRequest("chunk", map[string]any{"chunk_id": UnknownHash}),
		NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"chunk_id": UnknownHash}),
		NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"block_id": past, "shard_id": 0}),
		NewRequest("tx", map[string]any{"tx_hash": UnknownHash, "sender_account_id": account}),
		NewRequest("EXPERIMENTAL_changes_in_block", map[string]any{"block_id": past}),
		NewRequest("query", map[string]any{"request_type": "view_account", "account_id": account, "block_id": past}),
		NewRequest("query", map[string]any{"request_type": "view_account", "account_id": "nobody-here.near", "finality": "final"}),
	}
	return append(reqs, malformedRequests(account, head)...)
}

// malformedRequests are requests nearcore refuses as malformed: bad
// params, unknown request and changes types, unknown methods.
func malformedRequests(account string, head uint64) []Request {
	return []Request{
		NewRequest("query", map[string]any{"request_type": "view_account", "account_id": account, "block_id": head, "finality": "final"}),
		NewRequest("query", map[string]any{"request_type": "view_account", "account_id": "Not A Valid Account!", "finality": "final"}),
		NewRequest("query", map[string]any{"request_type": "view_account", "account_id": account, "block_id": -5}),
		NewRequest("query", map[string]any{"request_type": "view_account", "account_id": account, "block_id": "18446744073709551616"}),
		NewRequest("query", map[string]any{"request_type": "view_state", "account_id": account, "prefix_base64": "%%%", "finality": "final"}),
		NewRequest("query", map[string]any{"request_type": "view_state", "account_id": account, "prefix_base64": "JyBPUiAxPTE7LS0=", "finality": "final"}),
		NewRequest("query", map[string]any{"request_type": "call_function", "account_id": account, "method_name": "x", "finality": "final"}),
		NewRequest("query", map[string]any{"request_type": "view_nothing", "account_id": account, "finality": "final"}),
		NewRequest("query", map[string]any{"request_type": "view_access_key", "account_id": account, "public_key": "ed25519:zzz", "finality": "final"}),
		NewRequest("query", []any{"view_account", account}),
		NewRequest("changes", map[string]any{"changes_type": "account_changes", "account_ids": "x", "finality": "final"}),
		NewRequest("changes", map[string]any{"changes_type": "bogus_changes", "account_ids": []string{account}, "finality": "final"}),
		NewRequest("block", map[string]any{"block_id": 3.5}),
		NewRequest("block", map[string]any{"block_id": "notahash"}),
		NewRequest("block", map[string]any{"block_id": -1}),
		NewRequest("block", map[string]any{"block_id": 1, "finality": "final"}),
		NewRequest("block", map[string]any{"finality": "soon"}),
		NewRequest("block", []any{}),
		NewRequest("chunk", map[string]any{}),
		NewRequest("chunk", map[string]any{"chunk_id": 7}),
		NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"chunk_id": "nope"}),
		NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"block_id": head}),
		NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"block_id": head, "shard_id": -1}),
		NewRequest("gas_price", []any{1, 2}),
		NewRequest("gas_price", "x"),
		NewRequest("tx", map[string]any{"tx_hash": "nope", "sender_account_id": account}),
		NewRequest("EXPERIMENTAL_nothing", map[string]any{}),
		NewRequest("no_such_method", map[string]any{}),
	}
}
