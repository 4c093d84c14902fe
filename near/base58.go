package near

import (
	"crypto/sha256"
	"errors"
	"math/big"
	"strings"
)

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// Base58MaxLen returns the length of the longest base58 text of n bytes:
// ceil(n * log(256) / log(58)). A 32-byte hash or ed25519 key is at most 44
// characters, a 64-byte secp256k1 key at most 88.
func Base58MaxLen(n int) int { return (n*1_365_658 + 999_999) / 1_000_000 }

// CryptoHash is a 32-byte hash (sha256), shown as base58.
type CryptoHash [32]byte

// String returns the base58 form of h, as nearcore shows hashes.
func (h CryptoHash) String() string { return Base58Encode(h[:]) }

// HashOf returns the sha256 of data.
func HashOf(data []byte) CryptoHash { return sha256.Sum256(data) }

// Base58Encode encodes b with Bitcoin's alphabet, as NEAR does.
func Base58Encode(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	n := new(big.Int).SetBytes(b)
	radix := big.NewInt(58)
	mod := new(big.Int)
	out := make([]byte, 0, len(b)*138/100+1)
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for range zeros {
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

var errBase58 = errors.New("invalid base58 character")

// ErrBase58TooLong is Base58DecodeMax's error for text of more bytes than
// asked for.
var ErrBase58TooLong = errors.New("base58 text too long")

// base58Digit returns the value of the base58 character c, or -1.
func base58Digit(c byte) int {
	switch {
	case c >= '1' && c <= '9':
		return int(c - '1')
	case c >= 'A' && c <= 'H':
		return int(c-'A') + 9
	case c >= 'J' && c <= 'N':
		return int(c-'J') + 17
	case c >= 'P' && c <= 'Z':
		return int(c-'P') + 22
	case c >= 'a' && c <= 'k':
		return int(c-'a') + 33
	case c >= 'm' && c <= 'z':
		return int(c-'m') + 44
	}
	return -1
}

// Base58Decode decodes base58 text of any length. Its cost grows with the
// square of len(s): decode what a client sent with Base58DecodeMax.
func Base58Decode(s string) ([]byte, error) { return Base58DecodeMax(s, len(s)) }

// Base58DecodeMax decodes base58 text of at most maxBytes bytes. Text longer
// than Base58MaxLen(maxBytes) is refused before any decoding, so the work is
// bounded by maxBytes whatever s holds: at most len(s)/5 passes over
// maxBytes/4 words.
func Base58DecodeMax(s string, maxBytes int) ([]byte, error) {
	if len(s) > Base58MaxLen(maxBytes) {
		return nil, ErrBase58TooLong
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	// The number, as little-endian 32-bit words, takes five digits per
	// pass (58^5 < 2^32, so a word times it plus a carry fits 64 bits).
	words := make([]uint32, 0, (len(s)-zeros)*733/4000+2)
	for i := zeros; i < len(s); {
		scale, value := uint64(1), uint64(0)
		for k := 0; k < 5 && i < len(s); k, i = k+1, i+1 {
			d := base58Digit(s[i])
			if d < 0 {
				return nil, errBase58
			}
			scale, value = scale*58, value*58+uint64(d)
		}
		carry := value
		for j, w := range words {
			v := uint64(w)*scale + carry
			words[j], carry = uint32(v), v>>32
		}
		for ; carry > 0; carry >>= 32 {
			words = append(words, uint32(carry))
		}
	}
	out := make([]byte, zeros, zeros+4*len(words))
	leading := true
	for j := len(words) - 1; j >= 0; j-- {
		for shift := 24; shift >= 0; shift -= 8 {
			b := byte(words[j] >> shift)
			if leading && b == 0 {
				continue
			}
			leading = false
			out = append(out, b)
		}
	}
	if len(out) > maxBytes {
		return nil, ErrBase58TooLong
	}
	return out, nil
}

// ParseCryptoHash decodes a base58 hash of exactly 32 bytes; text longer
// than MaxHashBase58 is refused without decoding.
func ParseCryptoHash(s string) (CryptoHash, error) {
	var h CryptoHash
	b, err := Base58DecodeMax(s, len(h))
	if err != nil {
		return h, err
	}
	if len(b) != len(h) {
		return h, errors.New("hash is not 32 bytes")
	}
	copy(h[:], b)
	return h, nil
}

// PublicKeyBorsh is the borsh form of a public key "ed25519:<base58>" (a
// bare base58 key is ed25519): the curve byte, 0 for ed25519 and 1 for
// secp256k1, then the key's bytes. Trie keys of access keys end with it,
// which orders them. A key that does not decode is returned as its text.
func PublicKeyBorsh(pk string) []byte {
	curve, data, found := strings.Cut(pk, ":")
	if !found {
		curve, data = "ed25519", pk
	}
	b, err := Base58Decode(data)
	if err != nil {
		return []byte(pk)
	}
	t := byte(0)
	if curve == "secp256k1" {
		t = 1
	}
	return append([]byte{t}, b...)
}
