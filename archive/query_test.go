package archive

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/rpctest"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
)

func viewParams(requestType, account string, block any, extra map[string]any) map[string]any {
	p := map[string]any{"request_type": requestType, "account_id": account}
	if block == "final" {
		p["finality"] = "final"
	} else {
		p["block_id"] = block
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func TestArchiveQueryState(t *testing.T) {
	t.Parallel()
	st := seedStore(t)
	h := archiveHandler(t, st, rpcserve.Config{}, Config{})

	var acc near.AccountView
	okResult(t, h, "query", viewParams("view_account", "alice.near", 10, nil), &acc)
	require.Equal(t, "100", acc.Amount.String())
	require.Equal(t, near.BlockStamp{BlockHeight: 10, BlockHash: seedHash("block", 10)}, acc.BlockStamp)
	for _, at := range []any{11, 13, "final", seedHash("block", 13)} {
		okResult(t, h, "query", viewParams("view_account", "alice.near", at, nil), &acc)
		require.Equal(t, "90", acc.Amount.String(), "at %v", at)
	}
	e := errCause(t, h, "query", viewParams("view_account", "nobody.near", 11, nil))
	require.Equal(t, "UNKNOWN_ACCOUNT", e.CauseName())
	require.JSONEq(t, `{"requested_account_id":"nobody.near","block_height":11,"block_hash":"`+seedHash("block", 11)+`"}`, string(e.Cause.Info))
	e = errCause(t, h, "query", viewParams("view_account", "alice.near", seedSkip, nil))
	require.Equal(t, "UNKNOWN_BLOCK", e.CauseName())
	require.JSONEq(t, `{"block_reference":{"block_id":12}}`, string(e.Cause.Info))
	e = errCause(t, h, "query", viewParams("view_account", "alice.near", 9, nil))
	require.Contains(t, string(e.Data), "first block this archive holds (#10)")

	var code near.ContractCodeView
	okResult(t, h, "query", viewParams("view_code", "status.near", "final", nil), &code)
	require.Equal(t, statusWasm(t), code.CodeBase64)
	require.Equal(t, near.HashOf(statusWasm(t)).String(), code.Hash)
	require.Equal(t, "NO_CONTRACT_CODE", errCause(t, h, "query", viewParams("view_code", "alice.near", "final", nil)).CauseName())
	require.Equal(t, "UNKNOWN_ACCOUNT", errCause(t, h, "query", viewParams("view_code", "nobody.near", "final", nil)).CauseName())

	var state near.ViewStateResult
	okResult(t, h, "query", viewParams("view_state", "status.near", 10, map[string]any{"prefix_base64": ""}), &state)
	require.Len(t, state.Values, 2)
	require.Equal(t, "STATE", string(state.Values[0].Key))
	require.Equal(t, "STATX", string(state.Values[1].Key))
	okResult(t, h, "query", viewParams("view_state", "status.near", 11, map[string]any{"prefix_base64": ""}), &state)
	require.Len(t, state.Values, 1)
	okResult(t, h, "query", viewParams("view_state", "status.near", 10, map[string]any{"prefix_base64": base64.StdEncoding.EncodeToString([]byte("STATX"))}), &state)
	require.Len(t, state.Values, 1)
	require.Equal(t, "x", string(state.Values[0].Value))
	require.Equal(t, "TOO_LARGE_CONTRACT_STATE",
		errCause(t, h, "query", viewParams("view_state", "big.near", "final", map[string]any{"prefix_base64": ""})).CauseName())
	require.Equal(t, "UNKNOWN_ACCOUNT",
		errCause(t, h, "query", viewParams("view_state", "nobody.near", "final", map[string]any{"prefix_base64": ""})).CauseName())
	unlimited := archiveHandler(t, st, rpcserve.Config{}, Config{ViewStateLimit: -1})
	raw := okResult(t, unlimited, "query", viewParams("view_state", "big.near", "final", map[string]any{"prefix_base64": ""}), nil)
	require.JSONEq(t, `{"values":[],"block_height":13,"block_hash":"`+seedHash("block", 13)+`"}`, string(raw))

	var key near.AccessKeyResult
	okResult(t, h, "query", viewParams("view_access_key", "alice.near", "final", map[string]any{"public_key": seedPK1}), &key)
	require.Equal(t, uint64(1), key.Nonce)
	require.Nil(t, key.Permission.FunctionCall)
	// A missing key is a success-shaped result for `query`, as nearcore.
	raw = okResult(t, h, "query", viewParams("view_access_key", "alice.near", 11, map[string]any{"public_key": seedPK2}), nil)
	require.Equal(t, `{"block_hash":"`+seedHash("block", 11)+`","block_height":11,"error":"access key `+seedPK2+` does not exist while viewing","logs":[]}`, string(raw))

	var list near.AccessKeyListView
	okResult(t, h, "query", viewParams("view_access_key_list", "alice.near", 10, nil), &list)
	require.Len(t, list.Keys, 2)
	require.Equal(t, seedPK1, list.Keys[0].PublicKey)
	require.Equal(t, "status.near", list.Keys[1].AccessKey.Permission.FunctionCall.ReceiverID)
	okResult(t, h, "query", viewParams("view_access_key_list", "alice.near", 11, nil), &list)
	require.Len(t, list.Keys, 1)
	raw = okResult(t, h, "query", viewParams("view_access_key_list", "nobody.near", 11, nil), nil)
	require.Contains(t, string(raw), `"keys":[]`)
}

func TestArchiveCallFunction(t *testing.T) {
	t.Parallel()
	h := archiveHandler(t, seedStore(t), rpcserve.Config{}, Config{})
	args := base64.StdEncoding.EncodeToString([]byte(`{"account_id":"bob.near"}`))
	call := func(account, method string, at any) map[string]any {
		return viewParams("call_function", account, at, map[string]any{"method_name": method, "args_base64": args})
	}

	var res near.CallResult
	okResult(t, h, "query", call("status.near", "get_status", "final"), &res)
	require.Equal(t, `"hello"`, string(res.Result))
	require.Equal(t, []string{"get_status for account_id bob.near"}, res.Logs)
	require.Equal(t, uint64(seedHead), res.BlockHeight)

	// Contract failures are nearcore 2.x's structured errors, `query` included.
	vmError := func(params map[string]any) (string, string) {
		t.Helper()
		e := errCause(t, h, "query", params)
		require.Equal(t, "CONTRACT_EXECUTION_ERROR", e.CauseName())
		var info struct {
			VMError     json.RawMessage `json:"vm_error"`
			BlockHeight uint64          `json:"block_height"`
		}
		require.NoError(t, json.Unmarshal(e.Cause.Info, &info))
		require.Equal(t, uint64(11), info.BlockHeight)
		var data string
		require.NoError(t, json.Unmarshal(e.Data, &data))
		return string(info.VMError), data
	}
	set := call("status.near", "set_status", 11)
	set["args_base64"] = base64.StdEncoding.EncodeToString([]byte(`{"message":"hi"}`))
	vm, data := vmError(set)
	require.JSONEq(t, `{"ExecutionError":"signer_account_id is not allowed in view calls"}`, vm)
	require.Contains(t, data, "Function call returned an error: ")
	vm, _ = vmError(call("status.near", "no_such_method", 11))
	require.JSONEq(t, `{"MethodResolveError":"MethodNotFound"}`, vm)
	vm, data = vmError(call("alice.near", "get_status", 11))
	require.JSONEq(t, `{"CompilationError":{"CodeDoesNotExist":{"account_id":"alice.near"}}}`, vm)
	require.Equal(t, `Function call returned an error: CompilationError(CodeDoesNotExist { account_id: AccountId("alice.near") })`, data)

	require.Equal(t, "UNKNOWN_ACCOUNT", errCause(t, h, "query", call("nobody.near", "get_status", 11)).CauseName())
}

func TestArchiveTxConfigStatus(t *testing.T) {
	t.Parallel()
	h := archiveHandler(t, seedStore(t), rpcserve.Config{}, Config{RPCAddr: "127.0.0.1:3030"})

	raw := okResult(t, h, "EXPERIMENTAL_tx_status", map[string]any{"tx_hash": seedTx, "sender_account_id": "alice.near"}, nil)
	require.Contains(t, string(raw), `"receipts":[{"receipt_id":"x"}]`)
	raw = okResult(t, h, "tx", []string{seedTx, "alice.near"}, nil)
	require.Equal(t, `{"final_execution_status":"FINAL","status":{"SuccessValue":""},"transaction":{"hash":"`+seedTx+
		`"},"transaction_outcome":null,"receipts_outcome":[]}`, string(raw))
	require.Equal(t, "UNKNOWN_TRANSACTION", errCause(t, h, "tx", []string{seedTx, "bob.near"}).CauseName())

	var genesis struct {
		ChainID string `json:"chain_id"`
	}
	okResult(t, h, "genesis_config", nil, &genesis)
	require.Equal(t, "nearline-test", genesis.ChainID)
	raw = okResult(t, h, "EXPERIMENTAL_protocol_config", map[string]any{"finality": "final"}, nil)
	require.JSONEq(t, `{"chain_id":"nearline-test","protocol_version":73,"runtime_config":{}}`, string(raw))
	raw = okResult(t, h, "block", map[string]any{"sync_checkpoint": "genesis"}, nil)
	require.Contains(t, string(raw), `"height":10`)
	var acc near.AccountView
	okResult(t, h, "query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "sync_checkpoint": "earliest_available"}, &acc)
	require.Equal(t, near.BlockStamp{BlockHeight: seedFirst, BlockHash: seedHash("block", seedFirst)}, acc.BlockStamp)

	var status near.StatusView
	okResult(t, h, "status", nil, &status)
	require.Equal(t, "nearline-test", status.ChainID)
	require.False(t, status.SyncInfo.Syncing)
	require.Equal(t, uint64(seedHead), status.SyncInfo.LatestBlockHeight)
	require.Equal(t, seedHash("block", seedHead), status.SyncInfo.LatestBlockHash)
	require.Equal(t, uint64(seedFirst), *status.SyncInfo.EarliestBlockHeight)
	require.Equal(t, "2023-11-14T22:13:33.000500Z", status.SyncInfo.LatestBlockTime)
	require.Equal(t, seedHash("block", seedFirst), status.GenesisHash)
	require.Equal(t, "127.0.0.1:3030", *status.RPCAddr)

	res, rerr := rpctest.Call(t, h, "health", nil)
	require.Nil(t, rerr)
	require.Equal(t, "null", string(res))
	require.Equal(t, "NOT_SERVED", errCause(t, h, "validators", []any{nil}).CauseName())
	e := errCause(t, h, "query", viewParams("view_state", "status.near", 11, map[string]any{"prefix_base64": "", "include_proof": true}))
	require.Equal(t, "NOT_SERVED", e.CauseName())
	require.Contains(t, string(e.Data), "include_proof")
}

func TestArchiveForwardsWhatItLacks(t *testing.T) {
	t.Parallel()
	h := archiveHandler(t, seedStore(t), rpcserve.Config{Forward: rpctest.EchoUpstream(t)}, Config{})
	var fwd struct {
		UpstreamSaw near.Request `json:"upstream_saw"`
	}
	okResult(t, h, "block", map[string]any{"block_id": 9}, &fwd)
	require.Equal(t, "block", fwd.UpstreamSaw.Method)
	require.JSONEq(t, `{"block_id":9}`, string(fwd.UpstreamSaw.Params))
	okResult(t, h, "tx", []string{seedTx, "bob.near"}, &fwd)
	require.Equal(t, "tx", fwd.UpstreamSaw.Method)
	okResult(t, h, "validators", []any{nil}, &fwd)
	require.Equal(t, "validators", fwd.UpstreamSaw.Method)
	// A proof is made of the state trie's nodes, which only a node has.
	proof := viewParams("view_state", "status.near", 11, map[string]any{"prefix_base64": "", "include_proof": true})
	okResult(t, h, "query", proof, &fwd)
	require.Equal(t, "query", fwd.UpstreamSaw.Method)
	sent, err := json.Marshal(proof)
	require.NoError(t, err)
	require.JSONEq(t, string(sent), string(fwd.UpstreamSaw.Params))
	okResult(t, h, "EXPERIMENTAL_view_state", map[string]any{"account_id": "status.near", "block_id": 11, "prefix_base64": "", "include_proof": true}, &fwd)
	require.Equal(t, "EXPERIMENTAL_view_state", fwd.UpstreamSaw.Method)
	var state near.ViewStateResult
	okResult(t, h, "query", viewParams("view_state", "status.near", 11, map[string]any{"prefix_base64": "", "include_proof": false}), &state)
	require.NotEmpty(t, state.Values, "without a proof, state is answered here")
	// What the archive has, and heights it knows are skipped, stay local.
	var b headerOnly
	okResult(t, h, "block", map[string]any{"block_id": 11}, &b)
	require.Equal(t, uint64(11), b.Header.Height)
	require.Equal(t, "UNKNOWN_BLOCK", errCause(t, h, "block", map[string]any{"block_id": seedSkip}).CauseName())
}

func TestArchiveHealthMaxLag(t *testing.T) {
	t.Parallel()
	st := seedStore(t)
	// The seeded blocks are from 2023: far older than a minute.
	stale := archiveHandler(t, st, rpcserve.Config{}, Config{HealthMaxLag: time.Minute})
	e := errCause(t, stale, "health", nil)
	require.Equal(t, "NO_NEW_BLOCKS", e.CauseName())
	require.Contains(t, string(e.Data), "No blocks for")
	var status near.StatusView
	okResult(t, stale, "status", nil, &status)
	require.True(t, status.SyncInfo.Syncing)
	lenient := archiveHandler(t, st, rpcserve.Config{}, Config{HealthMaxLag: 100 * 365 * 24 * time.Hour})
	res, rerr := rpctest.Call(t, lenient, "health", nil)
	require.Nil(t, rerr)
	require.Equal(t, "null", string(res))
}
