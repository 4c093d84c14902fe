package sim

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
)

// zeroHash is the all-zero hash as nearcore shows it.
const zeroHash = "11111111111111111111111111111111"

// hashOf returns the base58 sha256 of the parts, each length-prefixed so
// that different splits never collide.
func hashOf(parts ...[]byte) string {
	return b58(hashBytes(parts...))
}

func hashBytes(parts ...[]byte) []byte {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return h.Sum(nil)
}

// hashJSON hashes the canonical (encoding/json) encoding of v with a domain.
func hashJSON(domain string, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only called with the sim's own plain structs.
		panic("sim: encode for hashing: " + err.Error())
	}
	return hashOf([]byte(domain), b)
}

// signature returns a deterministic ed25519-looking signature of msg by
// signer: "ed25519:" and base58 of 64 bytes.
func signature(signer, msg string) string {
	sum := sha512.Sum512([]byte("sig\x00" + signer + "\x00" + msg))
	return "ed25519:" + b58(sum[:])
}

// keyBytes derives the 32 public key bytes of an account's n-th key.
func keyBytes(seed uint64, account string, n int) []byte {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], seed)
	binary.LittleEndian.PutUint64(b[8:], uint64(n))
	return hashBytes([]byte("key"), b[:], []byte(account))
}

// publicKey returns "ed25519:<base58>" of the account's n-th key.
func publicKey(seed uint64, account string, n int) string {
	return "ed25519:" + b58(keyBytes(seed, account, n))
}

// newRand returns a PCG stream for (seed, stream).
func newRand(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))
}

// Random stream ids: the chain and the faults never share one.
const (
	streamChain  = 1
	streamTxs    = 2
	streamFaults = 3
	streamFork   = 4
)

func u64bytes(v uint64) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return b[:]
}

const b58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// b58 is base58 (Bitcoin alphabet) without big integers: the sim encodes
// hundreds of thousands of hashes and signatures, and math/big dominated.
// It works in limbs of ten base-58 digits (58^10 < 2^64) and matches
// near.Base58Encode byte for byte.
func b58(in []byte) string {
	const limbBase = 430804206899405824 // 58^10
	zeros := 0
	for zeros < len(in) && in[zeros] == 0 {
		zeros++
	}
	limbs := make([]uint64, 0, len(in)/7+1) // little-endian limbs
	for _, b := range in[zeros:] {
		carry := uint64(b)
		for i := range limbs {
			// limb < 58^10 < 2^59, so limb*256 + carry fits in 2^67: split.
			hi, lo := bits.Mul64(limbs[i], 256)
			lo, c := bits.Add64(lo, carry, 0)
			hi += c
			q, r := bits.Div64(hi, lo, limbBase)
			limbs[i], carry = r, q
		}
		for carry > 0 {
			limbs = append(limbs, carry%limbBase)
			carry /= limbBase
		}
	}
	digits := make([]byte, 0, len(limbs)*10+zeros)
	for i, l := range limbs {
		for range 10 {
			if i == len(limbs)-1 && l == 0 {
				break
			}
			digits = append(digits, b58Alphabet[l%58])
			l /= 58
		}
	}
	for range zeros {
		digits = append(digits, '1')
	}
	for i, j := 0, len(digits)-1; i < j; i, j = i+1, j-1 {
		digits[i], digits[j] = digits[j], digits[i]
	}
	return string(digits)
}
