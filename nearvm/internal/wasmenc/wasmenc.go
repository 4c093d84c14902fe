// Package wasmenc writes the numbers and names of WebAssembly's binary
// format: the encoding nearvm's instrumentation writes modules with, and
// the one nearvm/wasmtest assembles test modules with.
package wasmenc

import "encoding/binary"

// AppendU32 appends v as an unsigned LEB128 number, which is what
// encoding/binary calls a uvarint.
func AppendU32(b []byte, v uint32) []byte { return binary.AppendUvarint(b, uint64(v)) }

// AppendS64 appends v as a signed LEB128 number (i32.const and i64.const
// immediates, data segment offsets).
func AppendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// AppendName appends s as a name: its length in bytes, then its bytes.
func AppendName(b []byte, s string) []byte {
	return append(AppendU32(b, uint32(len(s))), s...)
}
