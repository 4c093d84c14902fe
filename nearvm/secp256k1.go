package nearvm

import "math/big"

// secp256k1 public key recovery on math/big, for the ecrecover host
// function. Speed is modest (a few milliseconds per recovery) and it is not
// constant time, which is fine for recovering public data.

var (
	secpP, _  = new(big.Int).SetString("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f", 16)
	secpN, _  = new(big.Int).SetString("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", 16)
	secpGx, _ = new(big.Int).SetString("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", 16)
	secpGy, _ = new(big.Int).SetString("483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8", 16)
	secpB     = big.NewInt(7)
	// secpHalfN is n/2: with the malleability flag, s must not exceed it.
	secpHalfN = new(big.Int).Rsh(secpN, 1)
	// secpSqrtExp is (p+1)/4; p = 3 mod 4, so a^((p+1)/4) is a square root.
	secpSqrtExp = new(big.Int).Rsh(new(big.Int).Add(secpP, big.NewInt(1)), 2)
)

// ecPoint is an affine point; inf marks the point at infinity.
type ecPoint struct {
	x, y *big.Int
	inf  bool
}

func ecAdd(a, b ecPoint) ecPoint {
	if a.inf {
		return b
	}
	if b.inf {
		return a
	}
	p := secpP
	var lambda *big.Int
	if a.x.Cmp(b.x) == 0 {
		if new(big.Int).Add(a.y, b.y).Mod(new(big.Int).Add(a.y, b.y), p).Sign() == 0 {
			return ecPoint{inf: true}
		}
		// Doubling: lambda = 3x^2 / 2y.
		num := new(big.Int).Mul(a.x, a.x)
		num.Mul(num, big.NewInt(3))
		den := new(big.Int).Lsh(a.y, 1)
		den.ModInverse(den.Mod(den, p), p)
		lambda = num.Mul(num, den)
	} else {
		num := new(big.Int).Sub(b.y, a.y)
		den := new(big.Int).Sub(b.x, a.x)
		den.ModInverse(den.Mod(den, p), p)
		lambda = num.Mul(num, den)
	}
	lambda.Mod(lambda, p)
	x := new(big.Int).Mul(lambda, lambda)
	x.Sub(x, a.x).Sub(x, b.x).Mod(x, p)
	y := new(big.Int).Sub(a.x, x)
	y.Mul(y, lambda).Sub(y, a.y).Mod(y, p)
	return ecPoint{x: x, y: y}
}

func ecMul(pt ecPoint, k *big.Int) ecPoint {
	result := ecPoint{inf: true}
	for i := k.BitLen() - 1; i >= 0; i-- {
		result = ecAdd(result, result)
		if k.Bit(i) == 1 {
			result = ecAdd(result, pt)
		}
	}
	return result
}

// secp256k1Recover recovers the public key (64 bytes, x||y big-endian) that
// signed the 32-byte digest with the 64-byte signature r||s and recovery id v
// (bit 0: y parity, bit 1: x = r + n). It reports false for a signature
// outside the valid range or one that recovers no key.
func secp256k1Recover(digest, sig []byte, v byte, rejectUpperS bool) ([]byte, bool) {
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:64])
	if r.Sign() == 0 || s.Sign() == 0 || r.Cmp(secpN) >= 0 || s.Cmp(secpN) >= 0 {
		return nil, false
	}
	if rejectUpperS && s.Cmp(secpHalfN) > 0 {
		return nil, false
	}
	x := new(big.Int).Set(r)
	if v&2 != 0 {
		x.Add(x, secpN)
	}
	if x.Cmp(secpP) >= 0 {
		return nil, false
	}
	// y^2 = x^3 + 7
	y2 := new(big.Int).Exp(x, big.NewInt(3), secpP)
	y2.Add(y2, secpB).Mod(y2, secpP)
	y := new(big.Int).Exp(y2, secpSqrtExp, secpP)
	if new(big.Int).Exp(y, big.NewInt(2), secpP).Cmp(y2) != 0 {
		return nil, false
	}
	if y.Bit(0) != uint(v&1) {
		y.Sub(secpP, y)
	}
	rPoint := ecPoint{x: x, y: y}
	e := new(big.Int).SetBytes(digest)
	e.Mod(e, secpN)
	rInv := new(big.Int).ModInverse(r, secpN)
	// Q = r^-1 (s R - e G)
	u1 := new(big.Int).Neg(e)
	u1.Mul(u1, rInv).Mod(u1, secpN)
	u2 := new(big.Int).Mul(s, rInv)
	u2.Mod(u2, secpN)
	q := ecAdd(ecMul(ecPoint{x: secpGx, y: secpGy}, u1), ecMul(rPoint, u2))
	if q.inf {
		return nil, false
	}
	out := make([]byte, 64)
	q.x.FillBytes(out[:32])
	q.y.FillBytes(out[32:])
	return out, true
}
