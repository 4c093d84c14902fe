package sim

import (
	"encoding/json"
	"testing"

	"github.com/nearline/nearline/near"

	"github.com/stretchr/testify/require"
)

// TestGlobalContracts runs a chain at protocol 77 and checks global
// contracts end to end through the JSON-RPC: distribution receipts reach
// every shard, accounts that use global code show nearcore's AccountView,
// and view_code, call_function and view_global_contract_code(_by_account_id)
// answer with the code as it was on the shard at each height.
func TestGlobalContracts(t *testing.T) {
	t.Parallel()
	cfg := testConfig(400)
	cfg.ProtocolVersion = 77
	cfg.TxsPerBlock = 12
	n, srv := startNode(t, cfg)
	c := n.chain

	// Distribution receipts in chunks: every identifier reaches every shard.
	reached := map[string]map[uint64]bool{}
	for _, ch := range c.chunks {
		for _, r := range ch.view.Receipts {
			d, ok, err := r.Receipt.GlobalDistribution()
			require.NoError(t, err)
			if !ok {
				continue
			}
			key := globalKey(d.ID)
			if reached[key] == nil {
				reached[key] = map[uint64]bool{}
			}
			reached[key][d.TargetShard] = true
			require.NotContains(t, d.AlreadyDeliveredShards, d.TargetShard)
			require.Equal(t, r.PredecessorID, r.ReceiverID)
		}
	}
	require.NotEmpty(t, reached, "no global contract was deployed")
	complete := 0
	for _, shards := range reached {
		if len(shards) == cfg.Shards {
			complete++
		}
	}
	require.Positive(t, complete, "no global contract reached all %d shards: %v", cfg.Shards, reached)

	head := c.head().height
	byHash, byAccount, calls := 0, 0, 0
	for _, id := range n.chain.gen.globalUsers {
		acc := c.st.accountAt(id, head)
		if acc == nil {
			continue // its creation failed (code not on its shard yet) or it was deleted
		}
		gid, ok := acc.GlobalContract()
		if !ok {
			continue // a switch that failed: the code was not on its shard yet
		}
		if gid.ByAccount() {
			byAccount++
		} else {
			byHash++
		}
		var view map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "query", map[string]any{
			"request_type": "view_account", "account_id": id, "block_id": head}), &view))
		require.JSONEq(t, `"11111111111111111111111111111111"`, string(view["code_hash"]))
		require.Contains(t, view, gidMember(gid))

		var code near.ContractCodeView
		require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "query", map[string]any{
			"request_type": "view_code", "account_id": id, "block_id": head}), &struct {
			Code *[]byte `json:"code_base64"`
			Hash *string `json:"hash"`
		}{&code.CodeBase64, &code.Hash}))
		require.Equal(t, near.HashOf(code.CodeBase64).String(), code.Hash)
		if !gid.ByAccount() {
			require.Equal(t, gid.CodeHash, code.Hash)
		}
		r := rpc(t, srv.URL, "query", map[string]any{"request_type": "call_function", "account_id": id,
			"method_name": "get_status", "args_base64": "eyJhY2NvdW50X2lkIjoiYWxpY2UubmVhciJ9", "block_id": head})
		if r.Error == nil {
			calls++
		}
	}
	require.Positive(t, byHash, "no account uses global code by hash")
	require.Positive(t, byAccount, "no account uses global code by account id")
	require.Positive(t, calls, "no call_function on global code succeeded")

	// view_global_contract_code: absent before the first deployment's code
	// reached shard 0, present at the head.
	for _, hash := range c.gen.globalHashes {
		params := map[string]any{"request_type": "view_global_contract_code", "code_hash": hash}
		params["block_id"] = c.blocks[0].height
		r := rpc(t, srv.URL, "query", params)
		require.NotNil(t, r.Error)
		require.Equal(t, "NO_GLOBAL_CONTRACT_CODE", r.Error.Cause.Name)
		params["block_id"] = head
		var got struct {
			Hash string `json:"hash"`
		}
		require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "query", params), &got))
		require.Equal(t, hash, got.Hash)
	}
	// By account id, a redeploy of other code changes the answer.
	redeployed := 0
	for _, owner := range c.gen.globalOwners {
		seen := map[string]bool{}
		for _, b := range c.blocks {
			if _, hash := c.st.globalAt(0, near.GlobalContractID{AccountID: owner}, b.height); hash != "" {
				seen[hash] = true
			}
		}
		if len(seen) > 1 {
			redeployed++
		}
	}
	require.Positive(t, redeployed, "no owner redeployed other code by account id")
	t.Logf("%d identifiers distributed (%d to all shards); %d accounts by hash, %d by account id; %d calls answered; %d owners redeployed",
		len(reached), complete, byHash, byAccount, calls, redeployed)
}

func gidMember(id near.GlobalContractID) string {
	if id.ByAccount() {
		return near.AccountGlobalContractAccountID
	}
	return near.AccountGlobalContractHash
}
