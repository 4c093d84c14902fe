package nearvm

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
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
func yieldModule() testModule {
	imps, fn := imports(
		testImport{name: "promise_yield_create", params: 7, results: 1},
		testImport{name: "promise_yield_resume", params: 4, results: 1, i32Result: true},
		testImport{name: "read_register", params: 2},
		testImport{name: "value_return", params: 2},
		testImport{name: "input", params: 1},
		testImport{name: "register_len", params: 1, results: 1},
	)
	create := ops(i64c(2), i64c(0), i64c(2), i64c(2), i64c(5_000_000_000_000), i64c(1), i64c(1), fn("promise_yield_create"))
	return testModule{imports: imps, memPages: 1, data: []testData{{0, []byte("cbxy")}}, funcs: []testFunc{
		{export: "yield", body: ops(create, dropOp, i64c(1), i64c(100), fn("read_register"), i64c(32), i64c(100), fn("value_return"))},
		{export: "twice", body: ops(create, dropOp, create, dropOp)},
		{export: "resume", locals: i64Local, body: ops(
			i64c(0), fn("input"), i64c(0), fn("register_len"), localSet0,
			i64c(0), i64c(200), fn("read_register"),
			i32c(300), i64c(32), i64c(200), localGet0, i64c(32), []byte{0x7d}, i64c(232), fn("promise_yield_resume"),
			[]byte{0xad}, i64StoreOp, // i64.extend_i32_u, store at 300
			i64c(8), i64c(300), fn("value_return"))},
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
	m.funcs = append(m.funcs, testFunc{export: "short", body: ops(
		i64c(31), i64c(0), i64c(0), i64c(0), call(1), dropOp)})
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
