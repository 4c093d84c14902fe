package nearvm

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	testfixture "github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/nearvm/internal/wasmenc"
	"github.com/nearline/nearline/nearvm/wasmtest"
)

func callModule(t *testing.T, r *Runtime, m wasmtest.Module, method string, c Context, st Storage) (*Outcome, error) {
	t.Helper()
	return r.Call(context.Background(), m.Encode(), "", method, c, st)
}

// requireFCE asserts err is a *FunctionCallError with the given public JSON.
func requireFCE(t *testing.T, err error, wantJSON string) *FunctionCallError {
	t.Helper()
	var fce *FunctionCallError
	require.True(t, errors.As(err, &fce), "want a *FunctionCallError, got %v", err)
	got, mErr := json.Marshal(fce)
	require.NoError(t, mErr)
	require.JSONEq(t, wantJSON, string(got))
	return fce
}

func TestMethodResolveErrors(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	m := wasmtest.Module{MemPages: 1, Funcs: []wasmtest.Func{{Export: "ok"}, {Export: "with_param", Params: 1}}}
	c := viewCtx("c.near", nil)

	out, err := callModule(t, r, m, "ok", c, newMemStorage())
	require.NoError(t, err)
	require.Empty(t, out.ReturnData)

	_, err = callModule(t, r, m, "missing", c, newMemStorage())
	fce := requireFCE(t, err, `{"MethodResolveError":"MethodNotFound"}`)
	require.Equal(t, "wasm execution failed with error: MethodResolveError(MethodNotFound)", fce.LegacyString())
	require.Equal(t, "Function call returned an error: MethodResolveError(MethodNotFound)", fce.RPCData())
	require.Equal(t, "MethodNotFound", fce.Error())

	_, err = callModule(t, r, m, "memory", c, newMemStorage())
	requireFCE(t, err, `{"MethodResolveError":"MethodNotFound"}`)
	_, err = callModule(t, r, m, "", c, newMemStorage())
	requireFCE(t, err, `{"MethodResolveError":"MethodEmptyName"}`)
	_, err = callModule(t, r, m, "with_param", c, newMemStorage())
	requireFCE(t, err, `{"MethodResolveError":"MethodInvalidSignature"}`)
}

// TestGuestPanicMatchesRPCFixture reproduces the recorded nearcore
// CONTRACT_EXECUTION_ERROR: the vm_error object and the legacy data string.
func TestGuestPanicMatchesRPCFixture(t *testing.T) {
	t.Parallel()
	raw := testfixture.Read(t, "rpc/EXPERIMENTAL_call_function/error-CONTRACT_EXECUTION_ERROR-panic-localnet.json")
	var fx struct {
		Response struct {
			Error struct {
				Cause struct {
					Info struct {
						VMError json.RawMessage `json:"vm_error"`
					} `json:"info"`
				} `json:"cause"`
				Data string `json:"data"`
			} `json:"error"`
		} `json:"response"`
	}
	require.NoError(t, json.Unmarshal(raw, &fx))
	var vmErr struct{ ExecutionError string }
	require.NoError(t, json.Unmarshal(fx.Response.Error.Cause.Info.VMError, &vmErr))
	panicMsg := vmErr.ExecutionError[len("Smart contract panicked: "):]

	r := newTestRuntime(t, Config{})
	m := wasmtest.Module{
		Imports:  wasmtest.Imports{{Name: "log_utf8", Params: 2}, {Name: "panic_utf8", Params: 2}},
		MemPages: 1,
		Data:     []wasmtest.Data{{Offset: 0, Bytes: []byte("before")}, {Offset: 100, Bytes: []byte(panicMsg)}},
		Funcs: []wasmtest.Func{{Export: "get_status", Body: wasmtest.Ops(
			wasmtest.I64Const(6, 0), wasmtest.Call(0),
			wasmtest.I64Const(int64(len(panicMsg)), 100), wasmtest.Call(1),
		)}},
	}
	out, err := callModule(t, r, m, "get_status", viewCtx("test.near", nil), newMemStorage())
	fce := requireFCE(t, err, string(fx.Response.Error.Cause.Info.VMError))
	require.Equal(t, fx.Response.Error.Data, fce.RPCData())
	require.Equal(t, `wasm execution failed with error: HostError(GuestPanic { panic_msg: "`+
		`{\"error\":{\"name\":\"CUSTOM_CONTRACT_ERROR\",\"cause\":{\"name\":\"near_sdk::errors::custom::InvalidArgument\",\"info\":{\"message\":\"haha invalid\"}}}}" })`,
		fce.LegacyString())
	require.Equal(t, []string{"before"}, out.Logs, "logs before the panic are kept")
	require.Positive(t, out.GasUsed)

	m2 := wasmtest.Module{Imports: wasmtest.Imports{{Name: "panic"}}, MemPages: 1, Funcs: []wasmtest.Func{{Export: "f", Body: wasmtest.Call(0)}}}
	_, err = callModule(t, r, m2, "f", viewCtx("c.near", nil), nil)
	requireFCE(t, err, `{"ExecutionError":"Smart contract panicked: explicit guest panic"}`)
}

func TestWasmTraps(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"unreachable", []byte{0x00}, "WebAssembly trap: An `unreachable` opcode was executed."},
		{"divide by zero", wasmtest.Ops(wasmtest.I32Const(1, 0), []byte{0x6d, 0x1a}), "WebAssembly trap: An arithmetic exception, e.g. divided by zero."},
		{"out of bounds load", wasmtest.Ops(wasmtest.I32Const(-1), []byte{0x29, 0x03, 0x00, 0x1a}), "WebAssembly trap: Memory out of bounds trap."},
		{"stack overflow", wasmtest.Call(0), "WebAssembly trap: Stack overflow."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := wasmtest.Module{MemPages: 1, Funcs: []wasmtest.Func{{Export: "f", Body: tc.body}}}
			out, err := callModule(t, r, m, "f", viewCtx("c.near", nil), nil)
			fce := requireFCE(t, err, `{"ExecutionError":`+mustJSON(t, tc.want)+`}`)
			require.Equal(t, KindWasmTrap, fce.Kind)
			require.NotNil(t, out)
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestProhibitedInView(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	m := wasmtest.Module{
		Imports:  wasmtest.Imports{{Name: "storage_write", Params: 5, Result: wasmtest.I64}, {Name: "storage_remove", Params: 3, Result: wasmtest.I64}},
		MemPages: 1,
		Data:     []wasmtest.Data{{Offset: 0, Bytes: []byte("keyval")}},
		Funcs: []wasmtest.Func{
			{Export: "write", Body: wasmtest.Ops(wasmtest.I64Const(3, 0, 3, 3, 0), wasmtest.Call(0), wasmtest.Drop())},
			{Export: "remove", Body: wasmtest.Ops(wasmtest.I64Const(3, 0, 0), wasmtest.Call(1), wasmtest.Drop())},
		},
	}
	_, err := callModule(t, r, m, "write", viewCtx("c.near", nil), newMemStorage())
	fce := requireFCE(t, err, `{"ExecutionError":"storage_write is not allowed in view calls"}`)
	require.Equal(t, `wasm execution failed with error: HostError(ProhibitedInView { method_name: "storage_write" })`, fce.LegacyString())
	_, err = callModule(t, r, m, "remove", viewCtx("c.near", nil), newMemStorage())
	requireFCE(t, err, `{"ExecutionError":"storage_remove is not allowed in view calls"}`)

	out, err := callModule(t, r, m, "write", changeCtx("c.near", "a.near", nil, U128{}), newMemStorage())
	require.NoError(t, err)
	require.Equal(t, []Write{{Key: []byte("key"), Value: []byte("val")}}, out.Writes)

	// A real contract: set_status needs the signer, which a view cannot see.
	f := loadFixture(t, "status_message")
	_, err = r.Call(context.Background(), f.Code, f.CodeHash, "set_status",
		viewCtx("c.near", map[string]string{"message": "hi"}), newMemStorage())
	requireFCE(t, err, `{"ExecutionError":"signer_account_id is not allowed in view calls"}`)
}

func loopModule() wasmtest.Module {
	// loop br 0 end: spins forever without calling anything.
	return wasmtest.Module{MemPages: 1, Funcs: []wasmtest.Func{{Export: "spin", Body: []byte{0x03, 0x40, 0x0c, 0x00, 0x0b}}}}
}

func TestInfiniteLoopRunsOutOfGas(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	start := time.Now()
	out, err := callModule(t, r, loopModule(), "spin", viewCtx("c.near", nil), nil)
	fce := requireFCE(t, err, `{"ExecutionError":"Exceeded the maximum amount of gas allowed to burn per contract."}`)
	require.Equal(t, "GasLimitExceeded", fce.Variant)
	require.Equal(t, DefaultMaxGas, out.GasUsed)
	t.Logf("300 Tgas of loop burnt in %s", time.Since(start))

	c := changeCtx("c.near", "a.near", nil, U128{})
	c.PrepaidGas = 10_000_000_000_000
	out, err = callModule(t, r, loopModule(), "spin", c, nil)
	requireFCE(t, err, `{"ExecutionError":"Exceeded the prepaid gas."}`)
	require.Equal(t, c.PrepaidGas, out.GasUsed)
}

func TestContextCancelStopsContract(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{MaxGas: math.MaxInt64})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	out, err := r.Call(ctx, loopModule().Encode(), "", "spin", viewCtx("c.near", nil), nil)
	require.Nil(t, out)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var fce *FunctionCallError
	require.False(t, errors.As(err, &fce))
	require.Less(t, time.Since(start), 5*time.Second)
}

func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	grow := func(pages int32) wasmtest.Module {
		// mem[0] = memory.grow(pages); value_return(4, 0)
		return wasmtest.Module{
			Imports:  wasmtest.Imports{{Name: "value_return", Params: 2}},
			MemPages: 1,
			Funcs: []wasmtest.Func{{Export: "grow", Body: wasmtest.Ops(
				wasmtest.I32Const(0, pages), []byte{0x40, 0x00}, []byte{0x36, 0x02, 0x00},
				wasmtest.I64Const(4, 0), wasmtest.Call(0),
			)}},
		}
	}
	out, err := callModule(t, r, grow(1000), "grow", viewCtx("c.near", nil), nil)
	require.NoError(t, err)
	require.Equal(t, []byte{1, 0, 0, 0}, out.ReturnData, "growth within 2048 pages succeeds")
	out, err = callModule(t, r, grow(4000), "grow", viewCtx("c.near", nil), nil)
	require.NoError(t, err)
	require.Equal(t, []byte{0xff, 0xff, 0xff, 0xff}, out.ReturnData, "growth past 2048 pages fails with -1")

	big := wasmtest.Module{MemPages: 3000, Funcs: []wasmtest.Func{{Export: "f"}}}
	_, err = callModule(t, r, big, "f", viewCtx("c.near", nil), nil)
	fce := requireFCE(t, err, `{"CompilationError":{"PrepareError":"Memory"}}`)
	require.Equal(t, "Function call returned an error: CompilationError(PrepareError(Memory))", fce.RPCData())

	imported := grow(10)
	imported.ImportMemory = true
	out, err = callModule(t, r, imported, "grow", viewCtx("c.near", nil), nil)
	require.NoError(t, err, "a contract importing env.memory runs")
	require.Equal(t, []byte{1, 0, 0, 0}, out.ReturnData)
}

func TestLinkError(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	m := wasmtest.Module{
		Imports:  wasmtest.Imports{{Name: "nonexistent_fn", Params: 1}},
		MemPages: 1,
		Funcs:    []wasmtest.Func{{Export: "main"}},
	}
	for i := 0; i < 2; i++ { // the second call is served from the cache
		_, err := callModule(t, r, m, "main", viewCtx("c.near", nil), nil)
		fce := requireFCE(t, err, `{"ExecutionError":"Link Error: Error while importing \"env\".\"nonexistent_fn\": unknown import. Expected Function(FunctionType { params: [I64], results: [] })"}`)
		require.Equal(t, KindLink, fce.Kind)
		require.Equal(t, `wasm execution failed with error: LinkError { msg: "Error while importing \"env\".\"nonexistent_fn\": unknown import. Expected Function(FunctionType { params: [I64], results: [] })" }`, fce.LegacyString())
	}
	_, err := callModule(t, r, m, "other", viewCtx("c.near", nil), nil)
	requireFCE(t, err, `{"MethodResolveError":"MethodNotFound"}`)

	wrongSig := wasmtest.Module{Imports: wasmtest.Imports{{Name: "panic", Params: 1}}, MemPages: 1, Funcs: []wasmtest.Func{{Export: "main"}}}
	_, err = callModule(t, r, wrongSig, "main", viewCtx("c.near", nil), nil)
	fce := requireFCE(t, err, `{"ExecutionError":"Link Error: Error while importing \"env\".\"panic\": incompatible import type. Expected Function(FunctionType { params: [I64], results: [] }) but received Function(FunctionType { params: [], results: [] })"}`)
	require.Equal(t, KindLink, fce.Kind)
}

func TestCompilationError(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	for _, code := range [][]byte{[]byte("not wasm at all"), nil, []byte("\x00asm\x01\x00\x00\x00\x0a\xff")} {
		out, err := r.Call(context.Background(), code, "", "main", viewCtx("c.near", nil), nil)
		fce := requireFCE(t, err, `{"CompilationError":{"PrepareError":"Deserialization"}}`)
		require.Equal(t, "wasm execution failed with error: CompilationError(PrepareError(Deserialization))", fce.LegacyString())
		require.Equal(t, "Function call returned an error: CompilationError(PrepareError(Deserialization))", fce.RPCData())
		require.NotNil(t, out)
	}
}

func TestModuleWithoutMemoryGetsOne(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	// Hand-encoded: no memory section; main calls value_return(0, 0).
	m := wasmtest.Module{Imports: wasmtest.Imports{{Name: "value_return", Params: 2}}, MemPages: 1,
		Funcs: []wasmtest.Func{{Export: "main", Body: wasmtest.Ops(wasmtest.I64Const(0, 0), wasmtest.Call(0))}}}
	stripped := stripExport(t, stripSection(t, m.Encode(), 5))
	out, err := r.Call(context.Background(), stripped, "", "main", viewCtx("c.near", nil), nil)
	require.NoError(t, err, "host functions need a memory")
	require.Empty(t, out.ReturnData)
}

// stripSection removes every section with id from a module.
func stripSection(t *testing.T, code []byte, id byte) []byte {
	t.Helper()
	sections, err := readSections(code)
	require.NoError(t, err)
	return encodeModule(slices.DeleteFunc(sections, func(s section) bool { return s.id == id }))
}

// stripExport rebuilds the export section without the memory export the
// test assembler always adds.
func stripExport(t *testing.T, code []byte) []byte {
	t.Helper()
	sections, err := readSections(code)
	require.NoError(t, err)
	for i, s := range sections {
		if s.id != exportSection {
			continue
		}
		r := &reader{buf: s.payload}
		var kept []byte
		count := uint32(0)
		require.NoError(t, r.vec(func() error {
			e, err := r.export()
			if err == nil && e.kind != 0x02 {
				kept = appendExport(kept, e)
				count++
			}
			return err
		}))
		sections[i].payload = append(wasmenc.AppendU32(nil, count), kept...)
	}
	return encodeModule(sections)
}

func TestViewContextAndCodeDoesNotExist(t *testing.T) {
	t.Parallel()
	c := ViewContext("ft.near", []byte(`{}`))
	require.True(t, c.View)
	require.Equal(t, "ft.near", c.SignerAccountID)
	require.Len(t, c.SignerAccountPK, 33)

	r := newTestRuntime(t, Config{})
	f := loadFixture(t, "fungible_token")
	_, err := r.Call(context.Background(), f.Code, f.CodeHash, "ft_total_supply", c, nil)
	requireFCE(t, err, `{"ExecutionError":"Smart contract panicked: The contract is not initialized"}`)

	fce := ErrCodeDoesNotExist("nocode.near")
	got, err := json.Marshal(fce)
	require.NoError(t, err)
	require.JSONEq(t, `{"CompilationError":{"CodeDoesNotExist":{"account_id":"nocode.near"}}}`, string(got))
	require.Equal(t, `wasm execution failed with error: CompilationError(CodeDoesNotExist { account_id: "nocode.near" })`, fce.LegacyString())
	require.Equal(t, "cannot find contract code for account nocode.near", fce.Error())
}
