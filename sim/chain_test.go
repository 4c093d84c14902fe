package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
)

func TestDeterministic(t *testing.T) {
	t.Parallel()
	cfg := testConfig(150)
	a, srvA := startNode(t, cfg)
	_, srvB := startNode(t, cfg)
	other := cfg
	other.Seed++
	_, srvC := startNode(t, other)
	for h := uint64(0); h <= cfg.MaxHeight; h++ {
		ra := rpcRaw(t, srvA.URL, "block", map[string]any{"block_id": h})
		require.Equal(t, string(ra), string(rpcRaw(t, srvB.URL, "block", map[string]any{"block_id": h})), "block %d", h)
		for _, m := range []string{"EXPERIMENTAL_changes_in_block", "gas_price"} {
			p := any(map[string]any{"block_id": h})
			if m == "gas_price" {
				p = []any{h}
			}
			require.Equal(t, string(rpcRaw(t, srvA.URL, m, p)), string(rpcRaw(t, srvB.URL, m, p)), "%s %d", m, h)
		}
		b := a.chain.byHeight[h]
		if b == nil {
			continue
		}
		for s := range b.view.Chunks {
			p := map[string]any{"block_id": h, "shard_id": s}
			require.Equal(t, string(rpcRaw(t, srvA.URL, "chunk", p)), string(rpcRaw(t, srvB.URL, "chunk", p)))
		}
		ids := []string{"alice.near", "bob.near", "status.near", "ft.near", "nft.near", "guestbook.near"}
		for _, ct := range []string{near.ChangesAccount, near.ChangesAllAccessKey, near.ChangesContractCode} {
			p := map[string]any{"changes_type": ct, "account_ids": ids, "block_id": h}
			require.Equal(t, string(rpcRaw(t, srvA.URL, "changes", p)), string(rpcRaw(t, srvB.URL, "changes", p)))
		}
	}
	for _, m := range []string{"genesis_config", "validators"} {
		require.Equal(t, string(rpcRaw(t, srvA.URL, m, nil)), string(rpcRaw(t, srvB.URL, m, nil)), m)
	}
	require.JSONEq(t, string(rpcRaw(t, srvA.URL, "query", map[string]any{"request_type": "view_state", "account_id": "ft.near", "prefix_base64": "", "finality": "final"})),
		string(rpcRaw(t, srvB.URL, "query", map[string]any{"request_type": "view_state", "account_id": "ft.near", "prefix_base64": "", "finality": "final"})))
	// Another seed is another chain.
	require.NotEqual(t, string(rpcRaw(t, srvA.URL, "block", map[string]any{"block_id": cfg.MaxHeight})),
		string(rpcRaw(t, srvC.URL, "block", map[string]any{"block_id": cfg.MaxHeight})))
}

func TestChainStructure(t *testing.T) {
	t.Parallel()
	n, srv := startNode(t, testConfig(300))
	c := n.chain
	skipped, missing := 0, 0
	var prev *block
	for h := uint64(0); h <= 300; h++ {
		b := c.byHeight[h]
		if b == nil {
			skipped++
			r := rpc(t, srv.URL, "block", map[string]any{"block_id": h})
			require.NotNil(t, r.Error, "skipped height %d", h)
			require.Equal(t, "UNKNOWN_BLOCK", r.Error.Cause.Name)
			continue
		}
		var v near.BlockView
		require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "block", map[string]any{"block_id": b.hash}), &v))
		require.Equal(t, h, v.Header.Height)
		if prev != nil {
			require.Equal(t, prev.hash, v.Header.PrevHash, "height %d links to the previous block over skipped heights", h)
			require.Equal(t, prev.height, *v.Header.PrevHeight)
			for s, ch := range v.Chunks {
				if !v.Header.ChunkMask[s] {
					missing++
					require.Equal(t, prev.view.Chunks[s].ChunkHash, ch.ChunkHash, "a missing chunk repeats the previous header")
					require.Less(t, ch.HeightIncluded, h)
					// chunk by block and shard answers the repeated (older) chunk.
					var cv near.ChunkView
					require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "chunk", map[string]any{"block_id": h, "shard_id": s}), &cv))
					require.Equal(t, ch.ChunkHash, cv.Header.ChunkHash)
				} else {
					require.Equal(t, h, ch.HeightIncluded)
					require.Equal(t, h, ch.HeightCreated)
					require.Equal(t, prev.hash, ch.PrevBlockHash)
				}
			}
			if prev.view.Header.GasPrice != v.Header.GasPrice {
				// the gas price moves
			}
		}
		// Epochs: the epoch id changes every epoch_length heights.
		e := (h - c.cfg.GenesisHeight) / c.cfg.EpochLength
		require.Equal(t, c.epochID(e), v.Header.EpochID)
		require.Equal(t, c.epochID(e+1), v.Header.NextEpochID)
		require.Len(t, v.Header.ChunkMask, c.cfg.Shards)
		prev = b
	}
	require.Greater(t, skipped, 5)
	require.Greater(t, missing, 5)
	prices := map[string]bool{}
	for _, b := range c.blocks {
		prices[b.view.Header.GasPrice.String()] = true
	}
	require.Greater(t, len(prices), 10, "gas price moves")
	r := rpc(t, srv.URL, "chunk", map[string]any{"block_id": c.head().height, "shard_id": 99})
	require.Equal(t, "INVALID_SHARD_ID", r.Error.Cause.Name)
	r = rpc(t, srv.URL, "chunk", map[string]any{"chunk_id": zeroHash})
	require.Equal(t, "UNKNOWN_CHUNK", r.Error.Cause.Name)
}

func TestShardLayout(t *testing.T) {
	t.Parallel()
	n, _ := startNode(t, testConfig(1))
	b := n.chain.layouts[0].boundaries
	require.Len(t, b, 3)
	// V1 rule: a boundary account is the first account of the next shard.
	require.Equal(t, 1, n.chain.shardOf(b[0]))
	require.Equal(t, 0, n.chain.shardOf("0000000000000000000000000000000000000000000000000000000000000000"))
	require.Equal(t, 3, n.chain.shardOf("zzzz.near"))
	require.Equal(t, b, n.chain.genesis.ShardLayout.V1.BoundaryAccounts)
}

// TestReceiptsAndState checks that receipts execute after their
// transactions, that every action kind occurs, and that state answers
// agree with the state changes block by block.
func TestReceiptsAndState(t *testing.T) {
	t.Parallel()
	n, srv := startNode(t, testConfig(400))
	c := n.chain
	kinds := map[string]int{}
	later := 0
	for _, tx := range c.txs {
		for _, a := range tx.view.Actions {
			kinds[a.Kind()]++
		}
		r := c.receipts[tx.receiptID]
		if r.executed {
			if tx.view.SignerID == tx.view.ReceiverID {
				require.Equal(t, tx.height, r.height, "a local receipt executes with its transaction")
			} else {
				require.Greater(t, r.height, tx.height, "a receipt executes after its transaction")
				later++
			}
		}
	}
	for _, k := range []string{"CreateAccount", "Transfer", "AddKey", "DeleteKey", "DeployContract", "FunctionCall", "Stake", "DeleteAccount"} {
		require.Positive(t, kinds[k], k)
	}
	require.Positive(t, later)
	// Callbacks: data receipts travel in chunks, and the receipts that
	// waited for them executed with the (failed) promise result.
	dataReceipts, callbacks := 0, 0
	for _, ch := range c.chunks {
		for _, r := range ch.view.Receipts {
			if r.Receipt.Data != nil && !r.Receipt.Data.IsPromiseResume { // resumes: TestRelayedAndYieldedTraffic
				dataReceipts++
				require.Nil(t, r.Receipt.Data.Data, "ft_on_transfer fails on status.near, so the data is null")
			}
		}
	}
	for _, r := range c.receipts {
		if a := r.view.Receipt.Action; a != nil && len(a.InputDataIDs) > 0 && r.executed && !a.IsPromiseYield {
			callbacks++
			require.Equal(t, "ft_resolve_transfer", a.Actions[0].FunctionCall.MethodName)
		}
	}
	require.Positive(t, dataReceipts)
	require.Positive(t, callbacks)
	causes := map[string]int{}
	types := map[string]int{}
	implicit := 0
	for _, b := range c.blocks {
		effects := map[string]bool{}
		lastAccount := map[string]*near.Account{}
		deleted := map[string]bool{}
		for _, ch := range b.changes {
			causes[ch.view.Cause.Type]++
			types[ch.view.Type]++
			effects[ch.effect+"/"+ch.view.Change.AccountID] = true
			switch ch.view.Type {
			case near.ChangeAccountUpdate:
				lastAccount[ch.view.Change.AccountID] = ch.view.Change.Account
				delete(deleted, ch.view.Change.AccountID)
				if near.IsImplicitAccount(ch.view.Change.AccountID) {
					implicit++
				}
			case near.ChangeAccountDeletion:
				deleted[ch.view.Change.AccountID] = true
				delete(lastAccount, ch.view.Change.AccountID)
			}
		}
		got := map[string]bool{}
		for _, e := range b.effects {
			got[e.Type+"/"+e.AccountID] = true
		}
		require.Equal(t, effects, got, "block_effects of %d agree with its changes", b.height)
		for id, acc := range lastAccount {
			var v near.AccountView
			require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "query", map[string]any{"request_type": "view_account", "account_id": id, "block_id": b.height}), &v))
			require.Equal(t, *acc, v.Account, "view_account %s at %d", id, b.height)
		}
		for id := range deleted {
			r := rpc(t, srv.URL, "query", map[string]any{"request_type": "view_account", "account_id": id, "block_id": b.height})
			require.Equal(t, "UNKNOWN_ACCOUNT", r.Error.Cause.Name)
		}
	}
	for _, cause := range []string{"transaction_processing", "receipt_processing", "action_receipt_gas_reward", "validator_accounts_update"} {
		require.Positive(t, causes[cause], cause)
	}
	for _, typ := range []string{near.ChangeAccountUpdate, near.ChangeAccountDeletion, near.ChangeAccessKeyUpdate, near.ChangeAccessKeyDeletion,
		near.ChangeDataUpdate, near.ChangeDataDeletion, near.ChangeContractCodeUpdate, near.ChangeContractCodeDeletion} {
		require.Positive(t, types[typ], typ)
	}
	require.Positive(t, implicit, "implicit accounts are created")
}

func TestContractsThroughNearvm(t *testing.T) {
	t.Parallel()
	n, srv := startNode(t, testConfig(200))
	// The FT contract was initialised at genesis by its own init method.
	var res near.CallResult
	raw := rpcResult(t, srv.URL, "query", map[string]any{"request_type": "call_function", "account_id": "ft.near",
		"method_name": "ft_total_supply", "args_base64": "", "block_id": 0})
	require.NoError(t, json.Unmarshal(raw, &res))
	require.Equal(t, `"1000000000000000000000000000000000"`, string(res.Result))
	// A status set by a transaction is what get_status returns afterwards.
	var tx *txRecord
	for _, r := range n.chain.txs {
		if r.view.ReceiverID == "status.near" && r.view.Actions[0].FunctionCall != nil &&
			r.view.Actions[0].FunctionCall.MethodName == "set_status" && n.chain.receipts[r.receiptID].executed {
			if tx == nil || r.height > tx.height {
				tx = r
			}
		}
	}
	require.NotNil(t, tx)
	var args struct {
		Message string `json:"message"`
	}
	require.NoError(t, json.Unmarshal(tx.view.Actions[0].FunctionCall.Args, &args))
	rh := n.chain.receipts[tx.receiptID].height
	q, _ := json.Marshal(map[string]string{"account_id": tx.view.SignerID})
	raw = rpcResult(t, srv.URL, "query", map[string]any{"request_type": "call_function", "account_id": "status.near",
		"method_name": "get_status", "args_base64": q, "block_id": rh})
	require.NoError(t, json.Unmarshal(raw, &res))
	require.Equal(t, fmt.Sprintf("%q", args.Message), string(res.Result))
	require.Equal(t, []string{"get_status for account_id " + tx.view.SignerID}, res.Logs)
	// The receipt's outcome carries the contract's own log.
	out := n.chain.receipts[tx.receiptID].outcome.Outcome
	require.Equal(t, []string{tx.view.SignerID + " set_status with message " + args.Message}, out.Logs)
	// view_state shows the contract's own storage layout.
	var vs near.ViewStateResult
	require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "query", map[string]any{"request_type": "view_state", "account_id": "status.near",
		"prefix_base64": "", "block_id": rh}), &vs))
	require.NotEmpty(t, vs.Values)
	require.Equal(t, "STATE", string(vs.Values[0].Key))
}

func TestNotSyncedYet(t *testing.T) {
	t.Parallel()
	cfg := testConfig(0)
	cfg.MaxHeight = 10
	n := newNode(t, cfg)
	srv := startServer(t, n)
	r := rpc(t, srv, "block", map[string]any{"finality": "final"})
	require.Equal(t, "NOT_SYNCED_YET", r.Error.Cause.Name)
	r = rpc(t, srv, "query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "finality": "final"})
	require.Equal(t, "NO_SYNCED_BLOCKS", r.Error.Cause.Name)
	require.Error(t, n.Health(context.Background()))
	require.NoError(t, n.Produce(context.Background()))
	require.NoError(t, n.Health(context.Background()))
	rpcResult(t, srv, "block", map[string]any{"finality": "final"})
}

func TestBase58MatchesNear(t *testing.T) {
	t.Parallel()
	r := newRand(1, 99)
	for n := 0; n < 70; n++ {
		for range 20 {
			b := make([]byte, n)
			for i := range b {
				if r.IntN(4) != 0 {
					b[i] = byte(r.IntN(256))
				}
			}
			require.Equal(t, near.Base58Encode(b), b58(b), "%x", b)
		}
	}
}

func TestAmounts(t *testing.T) {
	t.Parallel()
	require.Equal(t, "1000000000000000000000000", nearAmount(1).String())
	require.Equal(t, "1000000000000000000000", milliNEAR(1).String())
	require.Equal(t, "1000000000000000000000000000000000", nearAmount(1_000_000_000).String())
}

func TestValidatorsParams(t *testing.T) {
	t.Parallel()
	n, srv := startNode(t, testConfig(60))
	head := n.chain.head()
	byNull := rpcResult(t, srv.URL, "validators", []any{nil})
	require.JSONEq(t, string(byNull), string(rpcResult(t, srv.URL, "validators", map[string]any{"epoch_id": head.epochID})))
	require.JSONEq(t, string(byNull), string(rpcResult(t, srv.URL, "validators", map[string]any{"block_id": head.hash})))
	var v near.EpochValidatorInfo
	require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "validators", []any{n.chain.blocks[2].height}), &v))
	require.Equal(t, uint64(0), v.EpochStartHeight)
	require.Equal(t, uint64(1), v.EpochHeight)
	r := rpc(t, srv.URL, "validators", map[string]any{"epoch_id": zeroHash[:31] + "2"})
	require.Equal(t, "UNKNOWN_EPOCH", r.Error.Cause.Name)
}

func TestGenesisHeight(t *testing.T) {
	t.Parallel()
	cfg := testConfig(1100)
	cfg.GenesisHeight = 1000
	n, srv := startNode(t, cfg)
	r := rpc(t, srv.URL, "block", map[string]any{"block_id": 999})
	require.Equal(t, "UNKNOWN_BLOCK", r.Error.Cause.Name)
	var g near.BlockView
	require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "block", map[string]any{"sync_checkpoint": "genesis"}), &g))
	require.Equal(t, uint64(1000), g.Header.Height)
	var gc near.GenesisConfig
	require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "genesis_config", nil), &gc))
	require.Equal(t, uint64(1000), gc.GenesisHeight)
	require.Positive(t, len(n.chain.txs))
	var v near.AccountView
	require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "block_id": 1000}), &v))
	require.Equal(t, nearAmount(1_000_000), v.Amount)
}
