package nearvm

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"hash"
	"math"

	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // NEAR's ripemd160 host function needs it.
	"golang.org/x/crypto/sha3"
)

// cryptoDefs are the hash and signature host functions.
func cryptoDefs() []hostDef {
	hashFn := func(newHash func() hash.Hash) hostFunc {
		return func(_ context.Context, s *callState, st []uint64) {
			data := s.memOrRegister(st[1], st[0])
			s.chargeBytes(costHashBase, costHashByte, uint64(len(data)))
			h := newHash()
			h.Write(data)
			s.setRegister(st[2], h.Sum(nil))
		}
	}
	return []hostDef{
		{"sha256", 3, 0, hashFn(sha256.New)},
		{"keccak256", 3, 0, hashFn(sha3.NewLegacyKeccak256)},
		{"keccak512", 3, 0, hashFn(sha3.NewLegacyKeccak512)},
		{"ripemd160", 3, 0, hashFn(ripemd160.New)},
		{"ecrecover", 7, 1, hostEcrecover},
		{"ed25519_verify", 6, 1, hostEd25519Verify},
	}
}

// memOrRegister reads a byte argument: n bytes at ptr, or, when n is
// u64::MAX, the contents of register ptr.
func (s *callState) memOrRegister(ptr, n uint64) []byte {
	if n != math.MaxUint64 {
		return s.memRead(ptr, n)
	}
	data, ok := s.registers[ptr]
	if !ok {
		s.fail(errInvalidRegisterID(ptr))
	}
	return data
}

// hostEcrecover(hash_len, hash_ptr, sig_len, sig_ptr, v, malleability_flag,
// register_id) -> 1 and the 64-byte public key (x||y) in the register, or 0.
func hostEcrecover(_ context.Context, s *callState, st []uint64) {
	s.charge(costEcrecover)
	sig := s.memOrRegister(st[3], st[2])
	if len(sig) != 64 {
		s.fail(errECRecover(fmt.Sprintf("The length of the signature: %d, exceeds the limit of 64 bytes", len(sig))))
	}
	v := st[4]
	if v >= 4 {
		s.fail(errECRecover(fmt.Sprintf("V recovery byte 0 through 3 are valid but was provided %d", v)))
	}
	digest := s.memOrRegister(st[1], st[0])
	if len(digest) != 32 {
		s.fail(errECRecover(fmt.Sprintf("The length of the hash: %d, exceeds the limit of 32 bytes", len(digest))))
	}
	var rejectUpper bool
	switch st[5] {
	case 0:
	case 1:
		rejectUpper = true
	default:
		s.fail(errECRecover(fmt.Sprintf("Malleability flag needs to be 0 or 1, but is instead %d", st[5])))
	}
	pub, ok := secp256k1Recover(digest, sig, byte(v), rejectUpper)
	if !ok {
		st[0] = 0
		return
	}
	s.setRegister(st[6], pub)
	st[0] = 1
}

// hostEd25519Verify(sig_len, sig_ptr, msg_len, msg_ptr, pk_len, pk_ptr) -> 1 or 0.
func hostEd25519Verify(_ context.Context, s *callState, st []uint64) {
	sig := s.memOrRegister(st[1], st[0])
	if len(sig) != ed25519.SignatureSize {
		s.fail(errEd25519("invalid signature length"))
	}
	msg := s.memOrRegister(st[3], st[2])
	s.chargeBytes(costEd25519Base, costEd25519Byte, uint64(len(msg)))
	pk := s.memOrRegister(st[5], st[4])
	if len(pk) != ed25519.PublicKeySize {
		s.fail(errEd25519("invalid public key length"))
	}
	if sig[63]&0xe0 != 0 {
		st[0] = 0
		return
	}
	st[0] = boolU64(ed25519.Verify(ed25519.PublicKey(pk), msg, sig))
}
