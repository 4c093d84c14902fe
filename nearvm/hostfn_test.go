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
)

// Instruction helpers for the host-function tests.
var (
	dropOp       = []byte{0x1a}
	maxU64       = i64c(-1) // u64::MAX as an i64 constant
	i64StoreOp   = []byte{0x37, 0x03, 0x00}
	localSet0    = []byte{0x21, 0x00}
	localGet0    = []byte{0x20, 0x00}
	i64Local     = []byte{valI64}
	storeResult0 = func(addr int32, call []byte) []byte { return ops(i32c(addr), call, i64StoreOp) }
)

// imports builds an import list and an index lookup by name.
func imports(defs ...testImport) ([]testImport, func(string) []byte) {
	return defs, func(name string) []byte {
		for i, d := range defs {
			if d.name == name {
				return call(i)
			}
		}
		panic("no import " + name)
	}
}

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
	imps, fn := imports(
		testImport{name: "write_register", params: 3, results: 0}, testImport{name: "read_register", params: 2, results: 0}, testImport{name: "register_len", params: 1, results: 1},
		testImport{name: "value_return", params: 2, results: 0}, testImport{name: "current_account_id", params: 1, results: 0}, testImport{name: "block_index", params: 0, results: 1},
		testImport{name: "block_timestamp", params: 0, results: 1}, testImport{name: "epoch_height", params: 0, results: 1}, testImport{name: "account_balance", params: 1, results: 0},
		testImport{name: "input", params: 1, results: 0}, testImport{name: "random_seed", params: 1, results: 0}, testImport{name: "prepaid_gas", params: 0, results: 1},
	)
	m := testModule{imports: imps, memPages: 1, data: []testData{{100, []byte("xyz")}}, funcs: []testFunc{
		{export: "echo", body: ops(i64c(0), fn("input"), maxU64, i64c(0), fn("value_return"))},
		{export: "account", body: ops(i64c(5), fn("current_account_id"), maxU64, i64c(5), fn("value_return"))},
		{export: "numbers", body: ops(
			storeResult0(0, fn("block_index")), storeResult0(8, fn("block_timestamp")), storeResult0(16, fn("epoch_height")),
			i64c(24), fn("account_balance"), i64c(40), i64c(0), fn("value_return"))},
		{export: "registers", body: ops(
			i64c(3), i64c(3), i64c(100), fn("write_register"),
			storeResult0(0, ops(i64c(3), fn("register_len"))), storeResult0(8, ops(i64c(9), fn("register_len"))),
			i64c(3), i64c(16), fn("read_register"), i64c(19), i64c(0), fn("value_return"))},
		{export: "bad_register", body: ops(i64c(42), i64c(0), fn("read_register"))},
		{export: "out_of_bounds", body: ops(i64c(10), i64c(70000), fn("value_return"))},
		{export: "seed", body: ops(i64c(1), fn("random_seed"), maxU64, i64c(1), fn("value_return"))},
		{export: "prepaid", body: ops(fn("prepaid_gas"), dropOp)},
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
	imps, fn := imports(
		testImport{name: "storage_write", params: 5, results: 1}, testImport{name: "storage_read", params: 3, results: 1}, testImport{name: "storage_remove", params: 3, results: 1},
		testImport{name: "storage_has_key", params: 2, results: 1}, testImport{name: "value_return", params: 2, results: 0}, testImport{name: "storage_iter_prefix", params: 2, results: 1},
	)
	write := func(key, val int64) []byte {
		return ops(i64c(2), i64c(key), i64c(2), i64c(val), i64c(1), fn("storage_write"))
	}
	m := testModule{imports: imps, memPages: 1,
		data: []testData{{0, []byte("k1")}, {10, []byte("v1")}, {20, []byte("v2")}, {30, []byte("k2")}},
		funcs: []testFunc{
			{export: "change", body: ops(
				storeResult0(200, write(0, 10)),                                          // k1 existed: 1, old value in register 1
				storeResult0(208, write(0, 20)),                                          // overwrite own write: 1
				storeResult0(216, ops(i64c(2), i64c(30), i64c(3), fn("storage_remove"))), // k2 existed: 1
				storeResult0(224, ops(i64c(2), i64c(30), fn("storage_has_key"))),         // now gone: 0
				storeResult0(232, ops(i64c(2), i64c(0), i64c(2), fn("storage_read"))),    // read own write: 1
				storeResult0(240, ops(i64c(2), i64c(30), i64c(4), fn("storage_read"))),   // removed: 0
				i64c(48), i64c(200), fn("value_return"))},
			{export: "get_k1", body: ops(i64c(2), i64c(0), i64c(2), fn("storage_read"), dropOp, maxU64, i64c(2), fn("value_return"))},
			{export: "iter", body: ops(i64c(2), i64c(0), fn("storage_iter_prefix"), dropOp)},
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
	imps, fn := imports(
		testImport{name: "sha256", params: 3, results: 0}, testImport{name: "keccak256", params: 3, results: 0}, testImport{name: "keccak512", params: 3, results: 0},
		testImport{name: "ripemd160", params: 3, results: 0}, testImport{name: "ecrecover", params: 7, results: 1}, testImport{name: "ed25519_verify", params: 6, results: 1},
		testImport{name: "value_return", params: 2, results: 0},
	)
	hash := func(name string) testFunc {
		return testFunc{export: name, body: ops(i64c(3), i64c(0), i64c(1), fn(name), maxU64, i64c(1), fn("value_return"))}
	}
	// go-ethereum's signature test vector.
	digest, _ := hex.DecodeString("ce0677bb30baa8cf067c88db9811f4333d131bf8bcf12fe7065d211dce971008")
	sig, _ := hex.DecodeString("90f27b8b488db00b00606796d2987f6a5f59ae62ea05effe84fef5b8b0e549984a691139ad57a3f0b906637673aa2f63d1f55cb1a69199d4009eea23ceaddc93")
	pub, _ := hex.DecodeString("e32df42865e97135acfb65f3bae71bdc86f4d49150ad6a440b6f15878109880a0a2b2667f7e725ceea70c673093bf67663e0312623c8e091b13cf2c0f11ef652")
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	edSig := ed25519.Sign(key, []byte("msg"))
	ecrecover := func(v, flag int64) []byte {
		return ops(storeResult0(1000, ops(i64c(32), i64c(100), i64c(64), i64c(200), i64c(v), i64c(flag), i64c(1), fn("ecrecover"))))
	}
	m := testModule{imports: imps, memPages: 1,
		data: []testData{{0, []byte("abc")}, {100, digest}, {200, sig}, {300, edSig}, {400, []byte("msgMSG")}, {500, key.Public().(ed25519.PublicKey)}},
		funcs: []testFunc{hash("sha256"), hash("keccak256"), hash("keccak512"), hash("ripemd160"),
			{export: "ecrecover", body: ops(ecrecover(1, 1), maxU64, i64c(1), fn("value_return"))},
			{export: "ecrecover_wrong_v", body: ops(ecrecover(0, 0), i64c(8), i64c(1000), fn("value_return"))},
			{export: "ecrecover_bad_v", body: ecrecover(5, 0)},
			{export: "ed25519", body: ops(
				storeResult0(1000, ops(i64c(64), i64c(300), i64c(3), i64c(400), i64c(32), i64c(500), fn("ed25519_verify"))),
				storeResult0(1008, ops(i64c(64), i64c(300), i64c(3), i64c(403), i64c(32), i64c(500), fn("ed25519_verify"))),
				i64c(16), i64c(1000), fn("value_return"))},
			{export: "ed25519_bad_key", body: ops(i64c(64), i64c(300), i64c(3), i64c(400), i64c(31), i64c(500), fn("ed25519_verify"), dropOp)},
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
	imps, fn := imports(
		testImport{name: "promise_batch_create", params: 2, results: 1}, testImport{name: "promise_batch_action_transfer", params: 2, results: 0},
		testImport{name: "promise_then", params: 9, results: 1}, testImport{name: "promise_return", params: 1, results: 0},
	)
	amount := U128FromUint64(1000).littleEndian()
	m := testModule{imports: imps, memPages: 1,
		data: []testData{{0, []byte("bob.near")}, {16, amount}, {40, []byte("cb")}, {50, []byte("{}")}, {60, []byte("carol.near")}, {80, []byte("Bad..id")}},
		funcs: []testFunc{
			{export: "send", locals: i64Local, body: ops(
				i64c(8), i64c(0), fn("promise_batch_create"), localSet0,
				localGet0, i64c(16), fn("promise_batch_action_transfer"),
				localGet0, i64c(10), i64c(60), i64c(2), i64c(40), i64c(2), i64c(50), i64c(16), i64c(5_000_000_000_000), fn("promise_then"),
				fn("promise_return"))},
			{export: "bad_account", body: ops(i64c(7), i64c(80), fn("promise_batch_create"), dropOp)},
			{export: "bad_index", body: ops(i64c(3), i64c(16), fn("promise_batch_action_transfer"))},
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
	imps, fn := imports(testImport{name: "log_utf8", params: 2, results: 0}, testImport{name: "log_utf16", params: 2, results: 0})
	utf16 := []byte{'h', 0, 0xe9, 0, 'l', 0, 0x3d, 0xd8, 0x00, 0xde, 0, 0} // "hé" + "l" + U+1F600, NUL-terminated
	m := testModule{imports: imps, memPages: 1,
		data: []testData{{0, []byte("plain\x00")}, {100, utf16}, {200, []byte{0xff, 0xfe}}},
		funcs: []testFunc{
			{export: "logs", body: ops(
				i64c(5), i64c(0), fn("log_utf8"), maxU64, i64c(0), fn("log_utf8"),
				i64c(10), i64c(100), fn("log_utf16"), maxU64, i64c(100), fn("log_utf16"))},
			{export: "bad_utf8", body: ops(i64c(2), i64c(200), fn("log_utf8"))},
			{export: "odd_utf16", body: ops(i64c(3), i64c(100), fn("log_utf16"))},
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
	imps, fn := imports(testImport{name: "abort", params: 4, i32Params: true})
	asString := func(s string) []byte { // AssemblyScript: u32 byte length, then UTF-16LE
		b := []byte{byte(2 * len(s)), 0, 0, 0}
		for _, c := range s {
			b = append(b, byte(c), 0)
		}
		return b
	}
	m := testModule{imports: imps, memPages: 1,
		data:  []testData{{0, asString("oops")}, {100, asString("main.ts")}},
		funcs: []testFunc{{export: "f", body: ops(i32c(4), i32c(104), i32c(12), i32c(3), fn("abort"))}},
	}
	_, err := callModule(t, r, m, "f", viewCtx("c.near", nil), nil)
	requireFCE(t, err, `{"ExecutionError":"Smart contract panicked: oops, filename: \"main.ts\" line: 12 col: 3"}`)
}
