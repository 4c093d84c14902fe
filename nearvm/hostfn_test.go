package nearvm

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // the host function under test
	"golang.org/x/crypto/sha3"

	"github.com/nearline/nearline/nearvm/wasmtest"
)

// Instruction helpers for the host-function tests.
var (
	maxU64       = wasmtest.I64Const(-1) // u64::MAX as an i64 constant
	i64StoreOp   = []byte{0x37, 0x03, 0x00}
	storeResult0 = func(addr int32, call []byte) []byte { return wasmtest.Ops(wasmtest.I32Const(addr), call, i64StoreOp) }
)

func u64s(b []byte) []uint64 {
	out := make([]uint64, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[i*8:])
	}
	return out
}

func TestRegistersAndContext(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	imps := wasmtest.Imports{
		{Name: "write_register", Params: 3}, {Name: "read_register", Params: 2}, {Name: "register_len", Params: 1, Result: wasmtest.I64},
		{Name: "value_return", Params: 2}, {Name: "current_account_id", Params: 1}, {Name: "block_index", Result: wasmtest.I64},
		{Name: "block_timestamp", Result: wasmtest.I64}, {Name: "epoch_height", Result: wasmtest.I64}, {Name: "account_balance", Params: 1},
		{Name: "input", Params: 1}, {Name: "random_seed", Params: 1}, {Name: "prepaid_gas", Result: wasmtest.I64},
	}
	fn := imps.Call
	m := wasmtest.Module{Imports: imps, MemPages: 1, Data: []wasmtest.Data{{Offset: 100, Bytes: []byte("xyz")}}, Funcs: []wasmtest.Func{
		{Export: "echo", Body: wasmtest.Ops(wasmtest.I64Const(0), fn("input"), maxU64, wasmtest.I64Const(0), fn("value_return"))},
		{Export: "account", Body: wasmtest.Ops(wasmtest.I64Const(5), fn("current_account_id"), maxU64, wasmtest.I64Const(5), fn("value_return"))},
		{Export: "numbers", Body: wasmtest.Ops(
			storeResult0(0, fn("block_index")), storeResult0(8, fn("block_timestamp")), storeResult0(16, fn("epoch_height")),
			wasmtest.I64Const(24), fn("account_balance"), wasmtest.I64Const(40, 0), fn("value_return"))},
		{Export: "registers", Body: wasmtest.Ops(
			wasmtest.I64Const(3, 3, 100), fn("write_register"),
			storeResult0(0, wasmtest.Ops(wasmtest.I64Const(3), fn("register_len"))), storeResult0(8, wasmtest.Ops(wasmtest.I64Const(9), fn("register_len"))),
			wasmtest.I64Const(3, 16), fn("read_register"), wasmtest.I64Const(19, 0), fn("value_return"))},
		{Export: "bad_register", Body: wasmtest.Ops(wasmtest.I64Const(42, 0), fn("read_register"))},
		{Export: "out_of_bounds", Body: wasmtest.Ops(wasmtest.I64Const(10, 70000), fn("value_return"))},
		{Export: "seed", Body: wasmtest.Ops(wasmtest.I64Const(1), fn("random_seed"), maxU64, wasmtest.I64Const(1), fn("value_return"))},
		{Export: "prepaid", Body: wasmtest.Ops(fn("prepaid_gas"), wasmtest.Drop())},
	}}
	c := viewCtx("contract.near", nil)
	c.Input = []byte(`{"a":1}`)
	c.BlockHeight, c.BlockTimestamp, c.EpochHeight = 123, 456, 7
	c.AccountBalance = nearAmount(t, "5")
	c.RandomSeed = []byte("0123456789abcdef0123456789abcdef")
	run := func(method string) (*Outcome, error) { return callModule(t, r, m, method, c, nil) }

	out, err := run("echo")
	require.NoError(t, err)
	require.Equal(t, `{"a":1}`, string(out.ReturnData))
	out, err = run("account")
	require.NoError(t, err)
	require.Equal(t, "contract.near", string(out.ReturnData))
	out, err = run("numbers")
	require.NoError(t, err)
	require.Equal(t, []uint64{123, 456, 7}, u64s(out.ReturnData[:24]))
	require.Equal(t, c.AccountBalance, u128FromLittleEndian(out.ReturnData[24:40]))
	out, err = run("registers")
	require.NoError(t, err)
	require.Equal(t, []uint64{3, math.MaxUint64}, u64s(out.ReturnData[:16]))
	require.Equal(t, "xyz", string(out.ReturnData[16:]))
	out, err = run("seed")
	require.NoError(t, err)
	require.Equal(t, c.RandomSeed, out.ReturnData)

	_, err = run("bad_register")
	fce := requireFCE(t, err, `{"ExecutionError":"Accessed invalid register id: 42"}`)
	require.Equal(t, "wasm execution failed with error: HostError(InvalidRegisterId { register_id: 42 })", fce.LegacyString())
	_, err = run("out_of_bounds")
	requireFCE(t, err, `{"ExecutionError":"Accessed memory outside the bounds."}`)
	_, err = run("prepaid")
	requireFCE(t, err, `{"ExecutionError":"prepaid_gas is not allowed in view calls"}`)
}

func TestStorageHostFunctions(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	imps := wasmtest.Imports{
		{Name: "storage_write", Params: 5, Result: wasmtest.I64}, {Name: "storage_read", Params: 3, Result: wasmtest.I64}, {Name: "storage_remove", Params: 3, Result: wasmtest.I64},
		{Name: "storage_has_key", Params: 2, Result: wasmtest.I64}, {Name: "value_return", Params: 2}, {Name: "storage_iter_prefix", Params: 2, Result: wasmtest.I64},
	}
	fn := imps.Call
	write := func(key, val int64) []byte {
		return wasmtest.Ops(wasmtest.I64Const(2, key, 2, val, 1), fn("storage_write"))
	}
	m := wasmtest.Module{Imports: imps, MemPages: 1,
		Data: []wasmtest.Data{{Offset: 0, Bytes: []byte("k1")}, {Offset: 10, Bytes: []byte("v1")}, {Offset: 20, Bytes: []byte("v2")}, {Offset: 30, Bytes: []byte("k2")}},
		Funcs: []wasmtest.Func{
			{Export: "change", Body: wasmtest.Ops(
				storeResult0(200, write(0, 10)), // k1 existed: 1, old value in register 1
				storeResult0(208, write(0, 20)), // overwrite own write: 1
				storeResult0(216, wasmtest.Ops(wasmtest.I64Const(2, 30, 3), fn("storage_remove"))), // k2 existed: 1
				storeResult0(224, wasmtest.Ops(wasmtest.I64Const(2, 30), fn("storage_has_key"))),   // now gone: 0
				storeResult0(232, wasmtest.Ops(wasmtest.I64Const(2, 0, 2), fn("storage_read"))),    // read own write: 1
				storeResult0(240, wasmtest.Ops(wasmtest.I64Const(2, 30, 4), fn("storage_read"))),   // removed: 0
				wasmtest.I64Const(48, 200), fn("value_return"))},
			{Export: "get_k1", Body: wasmtest.Ops(wasmtest.I64Const(2, 0, 2), fn("storage_read"), wasmtest.Drop(), maxU64, wasmtest.I64Const(2), fn("value_return"))},
			{Export: "iter", Body: wasmtest.Ops(wasmtest.I64Const(2, 0), fn("storage_iter_prefix"), wasmtest.Drop())},
		}}
	st := newMemStorage()
	st.data["k1"] = []byte("old")
	st.data["k2"] = []byte("val2")
	c := changeCtx("c.near", "a.near", nil, U128{})
	out, err := callModule(t, r, m, "change", c, st)
	require.NoError(t, err)
	require.Equal(t, []uint64{1, 1, 1, 0, 1, 0}, u64s(out.ReturnData))
	require.Equal(t, []Write{
		{Key: []byte("k1"), Value: []byte("v1")},
		{Key: []byte("k1"), Value: []byte("v2")},
		{Key: []byte("k2"), Removed: true},
	}, out.Writes)
	require.Equal(t, c.StorageUsage-1-(2+4+storageRecordOverhead), out.StorageUsage)
	require.Equal(t, 2, st.reads, "each key is read from Storage once per call")
	require.Equal(t, "old", string(st.data["k1"]), "Storage itself is not written")

	st.apply(out)
	out, err = callModule(t, r, m, "get_k1", viewCtx("c.near", nil), st)
	require.NoError(t, err)
	require.Equal(t, "v2", string(out.ReturnData))

	_, err = callModule(t, r, m, "iter", viewCtx("c.near", nil), st)
	requireFCE(t, err, `{"ExecutionError":"Attempted to call deprecated host function storage_iter_prefix"}`)
}

func TestHashesAndSignatures(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	imps := wasmtest.Imports{
		{Name: "sha256", Params: 3}, {Name: "keccak256", Params: 3}, {Name: "keccak512", Params: 3},
		{Name: "ripemd160", Params: 3}, {Name: "ecrecover", Params: 7, Result: wasmtest.I64}, {Name: "ed25519_verify", Params: 6, Result: wasmtest.I64},
		{Name: "value_return", Params: 2},
	}
	fn := imps.Call
	hash := func(name string) wasmtest.Func {
		return wasmtest.Func{Export: name, Body: wasmtest.Ops(wasmtest.I64Const(3, 0, 1), fn(name), maxU64, wasmtest.I64Const(1), fn("value_return"))}
	}
	// go-ethereum's signature test vector.
	digest, _ := hex.DecodeString("ce0677bb30baa8cf067c88db9811f4333d131bf8bcf12fe7065d211dce971008")
	sig, _ := hex.DecodeString("90f27b8b488db00b00606796d2987f6a5f59ae62ea05effe84fef5b8b0e549984a691139ad57a3f0b906637673aa2f63d1f55cb1a69199d4009eea23ceaddc93")
	pub, _ := hex.DecodeString("e32df42865e97135acfb65f3bae71bdc86f4d49150ad6a440b6f15878109880a0a2b2667f7e725ceea70c673093bf67663e0312623c8e091b13cf2c0f11ef652")
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	edSig := ed25519.Sign(key, []byte("msg"))
	ecrecover := func(v, flag int64) []byte {
		return wasmtest.Ops(storeResult0(1000, wasmtest.Ops(wasmtest.I64Const(32, 100, 64, 200, v, flag, 1), fn("ecrecover"))))
	}
	m := wasmtest.Module{Imports: imps, MemPages: 1,
		Data: []wasmtest.Data{{Offset: 0, Bytes: []byte("abc")}, {Offset: 100, Bytes: digest}, {Offset: 200, Bytes: sig}, {Offset: 300, Bytes: edSig}, {Offset: 400, Bytes: []byte("msgMSG")}, {Offset: 500, Bytes: key.Public().(ed25519.PublicKey)}},
		Funcs: []wasmtest.Func{hash("sha256"), hash("keccak256"), hash("keccak512"), hash("ripemd160"),
			{Export: "ecrecover", Body: wasmtest.Ops(ecrecover(1, 1), maxU64, wasmtest.I64Const(1), fn("value_return"))},
			{Export: "ecrecover_wrong_v", Body: wasmtest.Ops(ecrecover(0, 0), wasmtest.I64Const(8, 1000), fn("value_return"))},
			{Export: "ecrecover_bad_v", Body: ecrecover(5, 0)},
			{Export: "ed25519", Body: wasmtest.Ops(
				storeResult0(1000, wasmtest.Ops(wasmtest.I64Const(64, 300, 3, 400, 32, 500), fn("ed25519_verify"))),
				storeResult0(1008, wasmtest.Ops(wasmtest.I64Const(64, 300, 3, 403, 32, 500), fn("ed25519_verify"))),
				wasmtest.I64Const(16, 1000), fn("value_return"))},
			{Export: "ed25519_bad_key", Body: wasmtest.Ops(wasmtest.I64Const(64, 300, 3, 400, 31, 500), fn("ed25519_verify"), wasmtest.Drop())},
		}}
	run := func(method string) (*Outcome, error) { return callModule(t, r, m, method, viewCtx("c.near", nil), nil) }
	sum := func(h interface {
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}) []byte {
		_, _ = h.Write([]byte("abc"))
		return h.Sum(nil)
	}
	for name, want := range map[string][]byte{
		"sha256": sum(sha256.New()), "keccak256": sum(sha3.NewLegacyKeccak256()),
		"keccak512": sum(sha3.NewLegacyKeccak512()), "ripemd160": sum(ripemd160.New()),
	} {
		out, err := run(name)
		require.NoError(t, err, name)
		require.Equal(t, want, out.ReturnData, name)
	}
	out, err := run("ecrecover")
	require.NoError(t, err)
	require.Equal(t, pub, out.ReturnData, "recovered public key")
	out, err = run("ecrecover_wrong_v")
	require.NoError(t, err)
	require.Equal(t, []uint64{1}, u64s(out.ReturnData), "the other parity recovers some other key")
	_, err = run("ecrecover_bad_v")
	requireFCE(t, err, `{"ExecutionError":"ECDSA recover error: V recovery byte 0 through 3 are valid but was provided 5"}`)

	out, err = run("ed25519")
	require.NoError(t, err)
	require.Equal(t, []uint64{1, 0}, u64s(out.ReturnData), "valid signature, then a different message")
	_, err = run("ed25519_bad_key")
	requireFCE(t, err, `{"ExecutionError":"ED25519 signature verification error: invalid public key length"}`)
}

func TestPromises(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	imps := wasmtest.Imports{
		{Name: "promise_batch_create", Params: 2, Result: wasmtest.I64}, {Name: "promise_batch_action_transfer", Params: 2},
		{Name: "promise_then", Params: 9, Result: wasmtest.I64}, {Name: "promise_return", Params: 1},
	}
	fn := imps.Call
	amount := U128FromUint64(1000).littleEndian()
	m := wasmtest.Module{Imports: imps, MemPages: 1,
		Data: []wasmtest.Data{{Offset: 0, Bytes: []byte("bob.near")}, {Offset: 16, Bytes: amount}, {Offset: 40, Bytes: []byte("cb")}, {Offset: 50, Bytes: []byte("{}")}, {Offset: 60, Bytes: []byte("carol.near")}, {Offset: 80, Bytes: []byte("Bad..id")}},
		Funcs: []wasmtest.Func{
			{Export: "send", Locals: []byte{wasmtest.I64}, Body: wasmtest.Ops(
				wasmtest.I64Const(8, 0), fn("promise_batch_create"), wasmtest.LocalSet(0),
				wasmtest.LocalGet(0), wasmtest.I64Const(16), fn("promise_batch_action_transfer"),
				wasmtest.LocalGet(0), wasmtest.I64Const(10, 60, 2, 40, 2, 50, 16, 5_000_000_000_000), fn("promise_then"),
				fn("promise_return"))},
			{Export: "bad_account", Body: wasmtest.Ops(wasmtest.I64Const(7, 80), fn("promise_batch_create"), wasmtest.Drop())},
			{Export: "bad_index", Body: wasmtest.Ops(wasmtest.I64Const(3, 16), fn("promise_batch_action_transfer"))},
		}}
	out, err := callModule(t, r, m, "send", changeCtx("c.near", "a.near", nil, U128{}), nil)
	require.NoError(t, err)
	require.Equal(t, []PromiseReceipt{
		{ReceiverID: "bob.near", Actions: []Action{{Kind: ActionTransfer, Deposit: U128FromUint64(1000)}}},
		{ReceiverID: "carol.near", DependsOn: []int{0}, Actions: []Action{{Kind: ActionFunctionCall, MethodName: "cb", Args: []byte("{}"),
			Deposit: U128FromUint64(1000), Gas: 5_000_000_000_000}}},
	}, out.Receipts)
	require.Equal(t, 1, out.ReturnedReceipt)

	_, err = callModule(t, r, m, "send", viewCtx("c.near", nil), nil)
	requireFCE(t, err, `{"ExecutionError":"promise_batch_create is not allowed in view calls"}`)
	_, err = callModule(t, r, m, "bad_account", changeCtx("c.near", "a.near", nil, U128{}), nil)
	requireFCE(t, err, `{"ExecutionError":"VM Logic returned an invalid account id"}`)
	_, err = callModule(t, r, m, "bad_index", changeCtx("c.near", "a.near", nil, U128{}), nil)
	requireFCE(t, err, `{"ExecutionError":"3 does not correspond to existing promises"}`)
}

func TestLogs(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	imps := wasmtest.Imports{{Name: "log_utf8", Params: 2}, {Name: "log_utf16", Params: 2}}
	fn := imps.Call
	utf16 := []byte{'h', 0, 0xe9, 0, 'l', 0, 0x3d, 0xd8, 0x00, 0xde, 0, 0} // "hé" + "l" + U+1F600, NUL-terminated
	m := wasmtest.Module{Imports: imps, MemPages: 1,
		Data: []wasmtest.Data{{Offset: 0, Bytes: []byte("plain\x00")}, {Offset: 100, Bytes: utf16}, {Offset: 200, Bytes: []byte{0xff, 0xfe}}},
		Funcs: []wasmtest.Func{
			{Export: "logs", Body: wasmtest.Ops(
				wasmtest.I64Const(5, 0), fn("log_utf8"), maxU64, wasmtest.I64Const(0), fn("log_utf8"),
				wasmtest.I64Const(10, 100), fn("log_utf16"), maxU64, wasmtest.I64Const(100), fn("log_utf16"))},
			{Export: "bad_utf8", Body: wasmtest.Ops(wasmtest.I64Const(2, 200), fn("log_utf8"))},
			{Export: "odd_utf16", Body: wasmtest.Ops(wasmtest.I64Const(3, 100), fn("log_utf16"))},
		}}
	out, err := callModule(t, r, m, "logs", viewCtx("c.near", nil), nil)
	require.NoError(t, err)
	require.Equal(t, []string{"plain", "plain", "hél😀", "hél😀"}, out.Logs)
	_, err = callModule(t, r, m, "bad_utf8", viewCtx("c.near", nil), nil)
	requireFCE(t, err, `{"ExecutionError":"String encoding is bad UTF-8 sequence."}`)
	_, err = callModule(t, r, m, "odd_utf16", viewCtx("c.near", nil), nil)
	requireFCE(t, err, `{"ExecutionError":"String encoding is bad UTF-16 sequence."}`)
}

func TestAbort(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	imps := wasmtest.Imports{{Name: "abort", Params: 4, I32Params: true}}
	fn := imps.Call
	asString := func(s string) []byte { // AssemblyScript: u32 byte length, then UTF-16LE
		b := []byte{byte(2 * len(s)), 0, 0, 0}
		for _, c := range s {
			b = append(b, byte(c), 0)
		}
		return b
	}
	m := wasmtest.Module{Imports: imps, MemPages: 1,
		Data:  []wasmtest.Data{{Offset: 0, Bytes: asString("oops")}, {Offset: 100, Bytes: asString("main.ts")}},
		Funcs: []wasmtest.Func{{Export: "f", Body: wasmtest.Ops(wasmtest.I32Const(4, 104, 12, 3), fn("abort"))}},
	}
	_, err := callModule(t, r, m, "f", viewCtx("c.near", nil), nil)
	requireFCE(t, err, `{"ExecutionError":"Smart contract panicked: oops, filename: \"main.ts\" line: 12 col: 3"}`)
}
