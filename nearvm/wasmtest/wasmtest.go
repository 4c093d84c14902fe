// Package wasmtest assembles small WebAssembly modules for tests: enough to
// hand-write contracts that call NEAR host functions, loop, trap or grow
// memory, without a WebAssembly toolchain.
//
// A Module lists its imported host functions (all from "env"), its memory,
// its functions and its data segments; Encode writes the binary module. The
// layout is fixed: one type per import, then one per function, in that
// order; imports keep their order, so import i is function index i and the
// module's own functions follow; the memory is defined (or imported) with a
// minimum only and exported as "memory". Function bodies are raw
// instructions, built with the instruction helpers (I64Const, Call,
// LocalGet, If, ...) and joined with Ops.
//
// The package imports nothing of nearvm's but the binary format's number
// and name encoding (nearvm/internal/wasmenc), so that nearvm's own tests
// can use it.
package wasmtest

import (
	"fmt"
	"slices"

	"github.com/nearline/nearline/nearvm/internal/wasmenc"
)

// Value types, as the binary format spells them.
const (
	I32 byte = 0x7f
	I64 byte = 0x7e
)

// Import is a host function the module imports from "env".
type Import struct {
	Name string
	// Params is the number of parameters, i64 unless I32Params.
	Params int
	// I32Params makes every parameter i32 (AssemblyScript's abort).
	I32Params bool
	// Result is the type of the one result, I32 or I64; zero means none.
	Result byte
}

// Imports are a module's imported functions, in index order.
type Imports []Import

// Call is a call of the import named name. It panics when there is none: a
// test's module is wrong.
func (imps Imports) Call(name string) []byte {
	for i, imp := range imps {
		if imp.Name == name {
			return Call(i)
		}
	}
	panic(fmt.Sprintf("wasmtest: no import %q", name))
}

// Func is a function the module defines. It returns nothing.
type Func struct {
	// Export is the name it is exported as; empty: not exported.
	Export string
	// Params is the number of its i64 parameters.
	Params int
	// Locals has one value type per local, after the parameters.
	Locals []byte
	// Body is its instructions, without the final end.
	Body []byte
}

// Data is an active data segment of memory 0: Bytes written at Offset.
type Data struct {
	Offset uint32
	Bytes  []byte
}

// Module is a module to encode.
type Module struct {
	Imports Imports
	// ImportMemory imports env.memory instead of defining the memory.
	ImportMemory bool
	// MemPages is the memory's minimum, in 64 KiB pages.
	MemPages uint32
	Funcs    []Func
	Data     []Data
}

// Encode writes m as a binary WebAssembly module.
func (m Module) Encode() []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")

	var types [][]byte
	for _, imp := range m.Imports {
		param := I64
		if imp.I32Params {
			param = I32
		}
		types = append(types, funcType(imp.Params, param, imp.Result))
	}
	for _, f := range m.Funcs {
		types = append(types, funcType(f.Params, I64, 0))
	}
	out = appendSection(out, 1, vec(types))

	var imports [][]byte
	for i, imp := range m.Imports {
		entry := wasmenc.AppendName(wasmenc.AppendName(nil, "env"), imp.Name)
		imports = append(imports, appendU32(append(entry, 0x00), i))
	}
	if m.ImportMemory {
		entry := wasmenc.AppendName(wasmenc.AppendName(nil, "env"), "memory")
		imports = append(imports, appendU32(append(entry, 0x02, 0x00), int(m.MemPages)))
	}
	if len(imports) > 0 {
		out = appendSection(out, 2, vec(imports))
	}

	var funcs, exports, code [][]byte
	for i, f := range m.Funcs {
		// Function i's index, and its type's: both come after the imports'.
		index := len(m.Imports) + i
		funcs = append(funcs, appendU32(nil, index))
		if f.Export != "" {
			exports = append(exports, appendU32(append(wasmenc.AppendName(nil, f.Export), 0x00), index))
		}
		var locals [][]byte
		for _, l := range f.Locals {
			locals = append(locals, []byte{1, l})
		}
		body := slices.Concat(vec(locals), f.Body, End())
		code = append(code, append(appendU32(nil, len(body)), body...))
	}
	exports = append(exports, append(wasmenc.AppendName(nil, "memory"), 0x02, 0x00))
	out = appendSection(out, 3, vec(funcs))
	if !m.ImportMemory {
		out = appendSection(out, 5, appendU32([]byte{1, 0x00}, int(m.MemPages)))
	}
	out = appendSection(out, 7, vec(exports))
	out = appendSection(out, 10, vec(code))

	if len(m.Data) > 0 {
		var segments [][]byte
		for _, d := range m.Data {
			s := slices.Concat([]byte{0x00}, I32Const(int32(d.Offset)), End())
			segments = append(segments, append(appendU32(s, len(d.Bytes)), d.Bytes...))
		}
		out = appendSection(out, 11, vec(segments))
	}
	return out
}

// funcType is a function type of params parameters of type param and one
// result of type result (zero: none).
func funcType(params int, param, result byte) []byte {
	t := appendU32([]byte{0x60}, params)
	for range params {
		t = append(t, param)
	}
	if result == 0 {
		return append(t, 0)
	}
	return append(t, 1, result)
}

// appendU32 appends v (a count, size or index) as an unsigned LEB128 number.
func appendU32(b []byte, v int) []byte { return wasmenc.AppendU32(b, uint32(v)) }

func appendSection(b []byte, id byte, payload []byte) []byte {
	return append(appendU32(append(b, id), len(payload)), payload...)
}

// vec is a vector of items: their count, then the items.
func vec(items [][]byte) []byte { return Ops(appendU32(nil, len(items)), Ops(items...)) }
