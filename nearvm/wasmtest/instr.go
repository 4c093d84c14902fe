package wasmtest

import (
	"slices"

	"github.com/nearline/nearline/nearvm/internal/wasmenc"
)

// Ops joins instructions into one sequence, in order.
func Ops(parts ...[]byte) []byte { return slices.Concat(parts...) }

// I64Const is one i64.const per value, in order.
func I64Const(values ...int64) []byte {
	var out []byte
	for _, v := range values {
		out = wasmenc.AppendS64(append(out, 0x42), v)
	}
	return out
}

// I32Const is one i32.const per value, in order.
func I32Const(values ...int32) []byte {
	var out []byte
	for _, v := range values {
		out = wasmenc.AppendS64(append(out, 0x41), int64(v))
	}
	return out
}

// Call calls function index (imports come first; see Imports.Call).
func Call(index int) []byte { return appendU32([]byte{0x10}, index) }

// LocalGet is local.get of local index (parameters come first).
func LocalGet(index int) []byte { return appendU32([]byte{0x20}, index) }

// LocalSet is local.set of local index (parameters come first).
func LocalSet(index int) []byte { return appendU32([]byte{0x21}, index) }

// Drop is drop.
func Drop() []byte { return []byte{0x1a} }

// I64Add is i64.add.
func I64Add() []byte { return []byte{0x7c} }

// I64Sub is i64.sub.
func I64Sub() []byte { return []byte{0x7d} }

// I64Eq is i64.eq.
func I64Eq() []byte { return []byte{0x51} }

// I64ExtendI32U is i64.extend_i32_u.
func I64ExtendI32U() []byte { return []byte{0xad} }

// If opens an if block that leaves nothing on the stack; Else and End
// follow it.
func If() []byte { return []byte{0x04, 0x40} }

// Else is else, inside an If.
func Else() []byte { return []byte{0x05} }

// End is end, closing an If. (Encode ends function bodies and data offsets
// itself.)
func End() []byte { return []byte{0x0b} }
