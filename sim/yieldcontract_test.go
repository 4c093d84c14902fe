package sim

import (
	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"testing"
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

// A minimal WebAssembly encoder, enough for the contract below.

// uleb appends v in unsigned LEB128, which is the varint encoding/binary
// writes.
func uleb(out []byte, v uint64) []byte { return binary.AppendUvarint(out, v) }

func sleb(out []byte, v int64) []byte {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

func wasmName(out []byte, s string) []byte { return append(uleb(out, uint64(len(s))), s...) }

func wasmSection(id byte, payload []byte) []byte {
	return append(uleb([]byte{id}, uint64(len(payload))), payload...)
}

func wasmVec(items [][]byte) []byte {
	out := uleb(nil, uint64(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

const (
	wI32 = 0x7f
	wI64 = 0x7e
)

type wImport struct {
	name   string
	params int  // i64 parameters
	result byte // 0, wI32 or wI64
}

type wFunc struct {
	export string
	locals []byte // one value type per local
	body   []byte
}

func i64const(v int64) []byte    { return sleb([]byte{0x42}, v) }
func localGet(i uint64) []byte   { return uleb([]byte{0x20}, i) }
func localSet(i uint64) []byte   { return uleb([]byte{0x21}, i) }
func callFn(i uint64) []byte     { return uleb([]byte{0x10}, i) }
func seq(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

var (
	opDrop      = []byte{0x1a}
	opI64Sub    = []byte{0x7d}
	opI64Add    = []byte{0x7c}
	opI64Eq     = []byte{0x51}
	opExtendU   = []byte{0xad}
	opIf        = []byte{0x04, 0x40}
	opElse      = []byte{0x05}
	opEnd       = []byte{0x0b}
	yieldImport = []wImport{
		{"input", 1, 0}, {"register_len", 1, wI64}, {"read_register", 2, 0},
		{"promise_yield_create", 7, wI64}, {"promise_yield_resume", 4, wI32}, {"promise_return", 1, 0},
		{"storage_write", 5, wI64}, {"storage_remove", 3, wI64}, {"promise_result", 2, wI64},
		{"value_return", 2, 0}, {"log_utf8", 2, 0},
	}
)

// assembleYieldContract encodes contracts/yield_resume.wat.
func assembleYieldContract() []byte {
	fn := func(name string) []byte {
		for i, imp := range yieldImport {
			if imp.name == name {
				return callFn(uint64(i))
			}
		}
		panic("no import " + name)
	}
	c := i64const
	funcs := []wFunc{
		{export: "request", locals: []byte{wI64, wI64}, body: seq(
			c(0), fn("input"),
			c(0), fn("register_len"), localSet(0),
			c(0), c(512), fn("read_register"),
			c(9), c(0), localGet(0), c(512), c(20_000_000_000_000), c(0), c(1), fn("promise_yield_create"), localSet(1),
			c(1), c(256), fn("read_register"),
			c(33), c(255), localGet(0), c(512), c(2), fn("storage_write"), opDrop,
			localGet(1), fn("promise_return"))},
		{export: "respond", locals: []byte{wI64, wI32}, body: seq(
			c(0), fn("input"),
			c(0), fn("register_len"), localSet(0),
			c(0), c(128), fn("read_register"),
			c(32), c(128), localGet(0), c(32), opI64Sub, c(160), fn("promise_yield_resume"), localSet(1),
			localGet(1), opIf, c(33), c(127), c(3), fn("storage_remove"), opDrop, opEnd,
			c(1), c(64), localGet(1), opExtendU, opI64Add, fn("value_return"))},
		{export: "on_resume", locals: []byte{wI64}, body: seq(
			c(0), c(0), fn("promise_result"), c(1), opI64Eq, opIf,
			c(0), fn("register_len"), localSet(0),
			c(0), c(512), fn("read_register"),
			localGet(0), c(512), fn("value_return"),
			opElse,
			c(7), c(80), fn("log_utf8"),
			opEnd)},
	}
	data := []struct {
		offset int64
		bytes  string
	}{{0, "on_resume"}, {64, "01"}, {80, "timeout"}, {127, "y"}, {255, "y"}}

	var types, imports, funcIdx, exports, code, segs [][]byte
	for i, imp := range yieldImport {
		t := uleb([]byte{0x60}, uint64(imp.params))
		t = append(t, bytes.Repeat([]byte{wI64}, imp.params)...)
		if imp.result != 0 {
			t = append(t, 1, imp.result)
		} else {
			t = append(t, 0)
		}
		types = append(types, t)
		entry := wasmName(wasmName(nil, "env"), imp.name)
		imports = append(imports, uleb(append(entry, 0x00), uint64(i)))
	}
	voidType := uint64(len(types))
	types = append(types, []byte{0x60, 0, 0})
	for i, f := range funcs {
		funcIdx = append(funcIdx, uleb(nil, voidType))
		exports = append(exports, uleb(append(wasmName(nil, f.export), 0x00), uint64(len(yieldImport)+i)))
		var locals [][]byte
		for _, l := range f.locals {
			locals = append(locals, []byte{1, l})
		}
		body := append(wasmVec(locals), f.body...)
		body = append(body, opEnd...)
		code = append(code, append(uleb(nil, uint64(len(body))), body...))
	}
	exports = append(exports, append(wasmName(nil, "memory"), 0x02, 0x00))
	for _, d := range data {
		s := append([]byte{0x00}, sleb([]byte{0x41}, d.offset)...)
		s = append(s, opEnd...)
		segs = append(segs, append(uleb(s, uint64(len(d.bytes))), d.bytes...))
	}
	out := []byte("\x00asm\x01\x00\x00\x00")
	out = append(out, wasmSection(1, wasmVec(types))...)
	out = append(out, wasmSection(2, wasmVec(imports))...)
	out = append(out, wasmSection(3, wasmVec(funcIdx))...)
	out = append(out, wasmSection(5, []byte{1, 0x00, 1})...)
	out = append(out, wasmSection(7, wasmVec(exports))...)
	out = append(out, wasmSection(10, wasmVec(code))...)
	out = append(out, wasmSection(11, wasmVec(segs))...)
	return out
}
