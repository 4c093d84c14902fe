package near

import (
	"crypto/sha256"
	"errors"
	"math/big"
	"strings"
)

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

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

// Base58Decode decodes base58 text.
func Base58Decode(s string) ([]byte, error) {
	n := new(big.Int)
	radix := big.NewInt(58)
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	for i := 0; i < len(s); i++ {
		d := -1
		for j := 0; j < len(base58Alphabet); j++ {
			if base58Alphabet[j] == s[i] {
				d = j
				break
			}
		}
		if d < 0 {
			return nil, errBase58
		}
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(d)))
	}
	out := append(make([]byte, zeros), n.Bytes()...)
	return out, nil
}

// ParseCryptoHash decodes a base58 hash of exactly 32 bytes.
func ParseCryptoHash(s string) (CryptoHash, error) {
	var h CryptoHash
	b, err := Base58Decode(s)
	if err != nil {
		return h, err
	}
	if len(b) != 32 {
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
