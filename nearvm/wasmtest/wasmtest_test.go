package wasmtest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConstLEB128 checks the signed LEB128 immediates of i64.const and
// i32.const at the edges where a byte is added or the sign bit moves.
func TestConstLEB128(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value int64
		want  []byte
	}{
		{0, []byte{0x42, 0x00}},
		{63, []byte{0x42, 0x3f}},
		{64, []byte{0x42, 0xc0, 0x00}},
		{-1, []byte{0x42, 0x7f}},
		{-64, []byte{0x42, 0x40}},
		{-65, []byte{0x42, 0xbf, 0x7f}},
		{math.MaxInt64, []byte{0x42, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}},
		{math.MinInt64, []byte{0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}},
	} {
		require.Equal(t, tc.want, I64Const(tc.value), "i64.const %d", tc.value)
	}
	require.Equal(t, []byte{0x41, 0x80, 0x80, 0x80, 0x80, 0x78}, I32Const(math.MinInt32))
	require.Equal(t, []byte{0x41, 0x01, 0x41, 0x7f}, I32Const(1, -1), "one instruction per value")
}

// TestEncodeLayout checks the fixed layout the package documents on the
// smallest module with an import, a function and a data segment.
func TestEncodeLayout(t *testing.T) {
	t.Parallel()
	imps := Imports{{Name: "log_utf8", Params: 2}}
	got := Module{
		Imports:  imps,
		MemPages: 1,
		Funcs:    []Func{{Export: "f", Body: Ops(I64Const(1, 0), imps.Call("log_utf8"))}},
		Data:     []Data{{Offset: 0, Bytes: []byte("x")}},
	}.Encode()
	want := Ops(
		[]byte("\x00asm\x01\x00\x00\x00"),
		[]byte{1, 9, 2, 0x60, 2, I64, I64, 0, 0x60, 0, 0}, // types: the import's, then the function's
		[]byte{2, 16, 1, 3, 'e', 'n', 'v', 8, 'l', 'o', 'g', '_', 'u', 't', 'f', '8', 0x00, 0},
		[]byte{3, 2, 1, 1},       // function 1 has type 1
		[]byte{5, 3, 1, 0x00, 1}, // one memory, minimum 1 page
		[]byte{7, 14, 2, 1, 'f', 0x00, 1, 6, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0},
		[]byte{10, 10, 1, 8, 0, 0x42, 1, 0x42, 0, 0x10, 0, 0x0b}, // no locals, the body, end
		[]byte{11, 7, 1, 0x00, 0x41, 0, 0x0b, 1, 'x'},
	)
	require.Equal(t, want, got)
}
