package near

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bigBase58Decode is the textbook decoder (one big-number multiply per
// character) that Base58DecodeMax replaced, kept as the reference.
func bigBase58Decode(s string) ([]byte, bool) {
	n, radix := new(big.Int), big.NewInt(58)
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte(base58Alphabet, s[i])
		if d < 0 {
			return nil, false
		}
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(d)))
	}
	return append(make([]byte, zeros), n.Bytes()...), true
}

func TestBase58DecodeMatchesTheReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(80))
		for i := range b {
			if rng.IntN(4) > 0 { // leading and inner zero bytes are common
				b[i] = byte(rng.IntN(256))
			}
		}
		text := Base58Encode(b)
		got, err := Base58Decode(text)
		require.NoError(t, err)
		require.True(t, bytes.Equal(b, got), "round trip of %x via %s gave %x", b, text, got)

		var s strings.Builder
		for range rng.IntN(60) {
			s.WriteByte(base58Alphabet[rng.IntN(58)])
		}
		want, _ := bigBase58Decode(s.String())
		got, err = Base58Decode(s.String())
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got), "decode %q: %x, want %x", s.String(), got, want)
	}
	for _, bad := range []string{"0", "O", "I", "l", "+", "ab/", "é", "1\x00"} {
		_, err := Base58Decode(bad)
		require.Error(t, err, bad)
	}
	got, err := Base58Decode("")
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestBase58DecodeMaxBounds(t *testing.T) {
	t.Parallel()
	require.Equal(t, 44, Base58MaxLen(32))
	require.Equal(t, 88, Base58MaxLen(64))
	// The largest 32-byte value and 32 zero bytes are within the bound.
	for _, b := range [][]byte{bytes.Repeat([]byte{0xff}, 32), make([]byte, 32)} {
		text := Base58Encode(b)
		require.LessOrEqual(t, len(text), Base58MaxLen(32))
		got, err := Base58DecodeMax(text, 32)
		require.NoError(t, err)
		require.Equal(t, b, got)
	}
	_, err := Base58DecodeMax(strings.Repeat("z", 44), 32) // 58^44 > 2^256
	require.Error(t, err)
	_, err = Base58DecodeMax(strings.Repeat("2", 45), 32)
	require.Error(t, err)

	// A megabyte of base58 is refused at once, not decoded (the old
	// decoder took about 23 CPU-seconds for it).
	// The bound is relative to reading the text once, here and now, so a
	// loaded machine slows both alike.
	huge := strings.Repeat("z", 1<<20)
	began := time.Now()
	require.Equal(t, 1<<20, strings.Count(huge+"ed25519:"+huge+"secp256k1:"+huge, "z")/3)
	read := time.Since(began)
	began = time.Now()
	_, err = ParseCryptoHash(huge)
	require.Error(t, err)
	require.False(t, ValidPublicKey("ed25519:"+huge))
	require.False(t, ValidPublicKey("secp256k1:"+huge))
	require.Less(t, time.Since(began), max(50*time.Millisecond, 50*read), "reading the text once took %s", read)
}

func TestValidPublicKey(t *testing.T) {
	t.Parallel()
	ed := Base58Encode(bytes.Repeat([]byte{7}, 32))
	secp := Base58Encode(bytes.Repeat([]byte{0xff}, 64))
	require.Len(t, secp, 88)
	require.True(t, ValidPublicKey("ed25519:"+ed))
	require.True(t, ValidPublicKey("secp256k1:"+secp))
	require.False(t, ValidPublicKey("secp256k1:"+ed))
	require.False(t, ValidPublicKey("ed25519:"+secp))
	require.False(t, ValidPublicKey("rsa:"+ed))
	require.False(t, ValidPublicKey(ed))
}
