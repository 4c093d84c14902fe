package nearvm

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/nearvm/wasmtest"
)

// pendingYields is a YieldState with the given data ids waiting.
type pendingYields [][]byte

func (p pendingYields) YieldPending(id []byte) bool {
	for _, w := range p {
		if bytes.Equal(w, id) {
			return true
		}
	}
	return false
}

// yieldModule: "yield" yields cb("xy") and returns the data id the host put
// in register 1; "resume" resumes the data id in its first 32 input bytes
// with the rest as payload and returns the result (as 8 bytes); "twice"
// yields two promises.
func yieldModule() wasmtest.Module {
	imps := wasmtest.Imports{
		{Name: "promise_yield_create", Params: 7, Result: wasmtest.I64},
		{Name: "promise_yield_resume", Params: 4, Result: wasmtest.I32},
		{Name: "read_register", Params: 2},
		{Name: "value_return", Params: 2},
		{Name: "input", Params: 1},
		{Name: "register_len", Params: 1, Result: wasmtest.I64},
	}
	fn := imps.Call
	create := wasmtest.Ops(wasmtest.I64Const(2, 0, 2, 2, 5_000_000_000_000, 1, 1), fn("promise_yield_create"))
	return wasmtest.Module{Imports: imps, MemPages: 1, Data: []wasmtest.Data{{Offset: 0, Bytes: []byte("cbxy")}}, Funcs: []wasmtest.Func{
		{Export: "yield", Body: wasmtest.Ops(create, wasmtest.Drop(), wasmtest.I64Const(1, 100), fn("read_register"), wasmtest.I64Const(32, 100), fn("value_return"))},
		{Export: "twice", Body: wasmtest.Ops(create, wasmtest.Drop(), create, wasmtest.Drop())},
		{Export: "resume", Locals: []byte{wasmtest.I64}, Body: wasmtest.Ops(
			wasmtest.I64Const(0), fn("input"), wasmtest.I64Const(0), fn("register_len"), wasmtest.LocalSet(0),
			wasmtest.I64Const(0, 200), fn("read_register"),
			wasmtest.I32Const(300), wasmtest.I64Const(32, 200), wasmtest.LocalGet(0), wasmtest.I64Const(32), wasmtest.I64Sub(), wasmtest.I64Const(232), fn("promise_yield_resume"),
			wasmtest.I64ExtendI32U(), i64StoreOp, // store at 300
			wasmtest.I64Const(8, 300), fn("value_return"))},
	}}
}

// TestYieldCreateMakesAPromiseYieldReceipt: promise_yield_create returns a
// promise, puts the data id in the register and makes a function call
// receipt on the contract itself that waits for that data id; each yield
// of a call gets its own id.
func TestYieldCreateMakesAPromiseYieldReceipt(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	c := changeCtx("c.near", "a.near", nil, U128{})
	c.ActionHash = bytes.Repeat([]byte{7}, 32)
	out, err := callModule(t, r, yieldModule(), "yield", c, newMemStorage())
	require.NoError(t, err)
	want := YieldDataID(c.ActionHash, 0)
	require.Len(t, want, 32)
	require.Equal(t, want, out.ReturnData)
	require.Len(t, out.Receipts, 1)
	rc := out.Receipts[0]
	require.Equal(t, "c.near", rc.ReceiverID)
	require.Equal(t, want, rc.YieldDataID)
	require.Equal(t, []Action{{Kind: ActionFunctionCall, MethodName: "cb", Args: []byte("xy"), Gas: 5_000_000_000_000, GasWeight: 1}}, rc.Actions)

	out, err = callModule(t, r, yieldModule(), "twice", c, newMemStorage())
	require.NoError(t, err)
	require.Len(t, out.Receipts, 2)
	require.Equal(t, YieldDataID(c.ActionHash, 1), out.Receipts[1].YieldDataID)
	require.NotEqual(t, out.Receipts[0].YieldDataID, out.Receipts[1].YieldDataID)
}

// TestYieldResume: a waiting yield is resumed (1, and the resume is in the
// outcome); one that is not waiting is not (0, no resume); a payload over
// 1024 bytes and a data id that is not 32 bytes are nearcore's host errors.
func TestYieldResume(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	waiting := bytes.Repeat([]byte{1}, 32)
	other := bytes.Repeat([]byte{2}, 32)
	c := changeCtx("c.near", "a.near", nil, U128{})
	c.Yields = pendingYields{waiting}
	run := func(input []byte) (*Outcome, error) {
		cc := c
		cc.Input = input
		return callModule(t, r, yieldModule(), "resume", cc, newMemStorage())
	}

	out, err := run(append(append([]byte{}, waiting...), "answer"...))
	require.NoError(t, err)
	require.Equal(t, []uint64{1}, u64s(out.ReturnData))
	require.Equal(t, []Resume{{DataID: waiting, Payload: []byte("answer")}}, out.Resumes)

	out, err = run(append(append([]byte{}, other...), "answer"...))
	require.NoError(t, err)
	require.Equal(t, []uint64{0}, u64s(out.ReturnData))
	require.Empty(t, out.Resumes)

	_, err = run(append(append([]byte{}, waiting...), bytes.Repeat([]byte{'x'}, 1025)...))
	requireFCE(t, err, `{"ExecutionError":"Yield resume payload is 1025 bytes which exceeds the 1024 byte limit"}`)

	cc := c
	cc.Input = waiting[:31]
	m := yieldModule()
	m.Funcs = append(m.Funcs, wasmtest.Func{Export: "short", Body: wasmtest.Ops(
		wasmtest.I64Const(31, 0, 0, 0), wasmtest.Call(1), wasmtest.Drop())})
	_, err = callModule(t, r, m, "short", cc, newMemStorage())
	requireFCE(t, err, `{"ExecutionError":"yield resumption token is malformed"}`)
}

// TestYieldIsProhibitedInView: both host functions fail a view call with
// nearcore's ProhibitedInView.
func TestYieldIsProhibitedInView(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	_, err := callModule(t, r, yieldModule(), "yield", viewCtx("c.near", nil), newMemStorage())
	fce := requireFCE(t, err, `{"ExecutionError":"promise_yield_create is not allowed in view calls"}`)
	require.Equal(t, `wasm execution failed with error: HostError(ProhibitedInView { method_name: "promise_yield_create" })`, fce.LegacyString())
	v := viewCtx("c.near", nil)
	v.Input = bytes.Repeat([]byte{1}, 40)
	_, err = callModule(t, r, yieldModule(), "resume", v, newMemStorage())
	requireFCE(t, err, `{"ExecutionError":"promise_yield_resume is not allowed in view calls"}`)
}
