package sim

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/nearline/nearline/nearvm/wasmtest"
)

var update = flag.Bool("update", false, "write contracts/yield_resume.wasm from its source")

// TestYieldContractIsItsSource assembles the yield/resume contract from the
// instructions of contracts/yield_resume.wat and requires the committed
// contracts/yield_resume.wasm to be exactly that module.
func TestYieldContractIsItsSource(t *testing.T) {
	t.Parallel()
	want := assembleYieldContract()
	path := filepath.Join("contracts", "yield_resume.wasm")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not the module its source assembles to (%d bytes, want %d); run with -update", path, len(got), len(want))
	}
}

// assembleYieldContract encodes contracts/yield_resume.wat.
func assembleYieldContract() []byte {
	imps := wasmtest.Imports{
		{Name: "input", Params: 1}, {Name: "register_len", Params: 1, Result: wasmtest.I64}, {Name: "read_register", Params: 2},
		{Name: "promise_yield_create", Params: 7, Result: wasmtest.I64}, {Name: "promise_yield_resume", Params: 4, Result: wasmtest.I32},
		{Name: "promise_return", Params: 1}, {Name: "storage_write", Params: 5, Result: wasmtest.I64}, {Name: "storage_remove", Params: 3, Result: wasmtest.I64},
		{Name: "promise_result", Params: 2, Result: wasmtest.I64}, {Name: "value_return", Params: 2}, {Name: "log_utf8", Params: 2},
	}
	fn := imps.Call
	c := wasmtest.I64Const
	get, set := wasmtest.LocalGet, wasmtest.LocalSet
	drop, end := wasmtest.Drop(), wasmtest.End()
	return wasmtest.Module{
		Imports:  imps,
		MemPages: 1,
		Funcs: []wasmtest.Func{
			{Export: "request", Locals: []byte{wasmtest.I64, wasmtest.I64}, Body: wasmtest.Ops(
				c(0), fn("input"),
				c(0), fn("register_len"), set(0),
				c(0, 512), fn("read_register"),
				c(9, 0), get(0), c(512, 20_000_000_000_000, 0, 1), fn("promise_yield_create"), set(1),
				c(1, 256), fn("read_register"),
				c(33, 255), get(0), c(512, 2), fn("storage_write"), drop,
				get(1), fn("promise_return"))},
			{Export: "respond", Locals: []byte{wasmtest.I64, wasmtest.I32}, Body: wasmtest.Ops(
				c(0), fn("input"),
				c(0), fn("register_len"), set(0),
				c(0, 128), fn("read_register"),
				c(32, 128), get(0), c(32), wasmtest.I64Sub(), c(160), fn("promise_yield_resume"), set(1),
				get(1), wasmtest.If(), c(33, 127, 3), fn("storage_remove"), drop, end,
				c(1, 64), get(1), wasmtest.I64ExtendI32U(), wasmtest.I64Add(), fn("value_return"))},
			{Export: "on_resume", Locals: []byte{wasmtest.I64}, Body: wasmtest.Ops(
				c(0, 0), fn("promise_result"), c(1), wasmtest.I64Eq(), wasmtest.If(),
				c(0), fn("register_len"), set(0),
				c(0, 512), fn("read_register"),
				get(0), c(512), fn("value_return"),
				wasmtest.Else(),
				c(7, 80), fn("log_utf8"),
				end)},
		},
		Data: []wasmtest.Data{
			{Offset: 0, Bytes: []byte("on_resume")}, {Offset: 64, Bytes: []byte("01")}, {Offset: 80, Bytes: []byte("timeout")},
			{Offset: 127, Bytes: []byte("y")}, {Offset: 255, Bytes: []byte("y")},
		},
	}.Encode()
}
