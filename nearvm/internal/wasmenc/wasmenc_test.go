package wasmenc_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/nearvm/internal/wasmenc"
)

// TestLEB128AtTheEdges checks the encodings the binary format's
// specification gives at the edges of each byte count.
func TestLEB128AtTheEdges(t *testing.T) {
	t.Parallel()
	for v, want := range map[int64][]byte{
		0: {0x00}, 63: {0x3f}, 64: {0xc0, 0x00}, -1: {0x7f}, -64: {0x40}, -65: {0xbf, 0x7f},
		624485: {0xe5, 0x8e, 0x26}, -123456: {0xc0, 0xbb, 0x78},
		-1 << 63: {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f},
	} {
		require.Equal(t, want, wasmenc.AppendS64(nil, v), "%d", v)
	}
	require.Equal(t, []byte{0xe5, 0x8e, 0x26}, wasmenc.AppendU32(nil, 624485))
	require.Equal(t, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, wasmenc.AppendU32(nil, 1<<32-1))
	require.Equal(t, []byte{3, 'e', 'n', 'v'}, wasmenc.AppendName(nil, "env"))
}
