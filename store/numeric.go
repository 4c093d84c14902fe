package store

import (
	"encoding/binary"
	"math/big"
	"math/bits"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/nearline/nearline/near"
)

// numericValue is a value of a numeric column whose magnitude fits 128
// bits (every balance, deposit, nonce and gas price of NEAR, and almost
// every token event's amount): copyIn encodes it in PostgreSQL's binary
// numeric form directly, without the big.Int and the per-value plan of
// pgx's pgtype.Numeric. NULL unless valid.
type numericValue struct {
	abs   near.U128
	neg   bool
	valid bool
}

func numeric(v near.U128) numericValue { return numericValue{abs: v, valid: true} }

func numeric64(v uint64) numericValue { return numericValue{abs: near.U128From64(v), valid: true} }

// bigNumeric is a numeric column's value of any magnitude (a token
// event's amount): a numericValue when it fits 128 bits, else big.
type bigNumeric struct {
	small numericValue
	big   *big.Int
}

// numericOfBig is v for a numeric column; nil is NULL.
func numericOfBig(v *big.Int) bigNumeric {
	if v == nil {
		return bigNumeric{}
	}
	if v.BitLen() > 128 {
		return bigNumeric{big: v}
	}
	var abs big.Int
	abs.Abs(v)
	lo := abs.Uint64()
	hi := abs.Rsh(&abs, 64).Uint64()
	return bigNumeric{small: numericValue{abs: near.U128{Hi: hi, Lo: lo}, neg: v.Sign() < 0, valid: true}}
}

// numericBase is the base of numeric's digits: each is 0..9999.
const numericBase = 10_000

// appendNumeric appends v's bytes in numeric's binary form (no length):
// the count of base-10000 digits, the weight of the first, the sign, the
// display scale (0: an integer), then the digits, most significant first,
// without the zero digits that end it (PostgreSQL's own form: the weight
// says where the point is).
func appendNumeric(buf []byte, v numericValue) []byte {
	// A u128 is below 10000^10.
	var digits [10]uint16
	n := 0
	hi, lo := v.abs.Hi, v.abs.Lo
	for hi != 0 || lo != 0 {
		var rem uint64
		hi, rem = bits.Div64(0, hi, numericBase)
		lo, rem = bits.Div64(rem, lo, numericBase)
		digits[n] = uint16(rem)
		n++
	}
	weight := n - 1
	low := 0 // the zero digits that end the number are not written
	for low < n && digits[low] == 0 {
		low++
	}
	count := n - low
	sign := uint16(0)
	if v.neg && count > 0 {
		sign = 0x4000
	}
	if count == 0 {
		weight = 0
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(count))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, 0)
	for i := n - 1; i >= low; i-- {
		buf = binary.BigEndian.AppendUint16(buf, digits[i])
	}
	return buf
}

// appendNumericElem is appendArray's element encoder for numeric[].
func appendNumericElem(b []byte, v numericValue) ([]byte, bool) {
	if !v.valid {
		return b, false
	}
	return appendNumeric(b, v), true
}

// pgNumeric is v as pgx's type, for a column copyIn does not encode a
// numericValue into itself.
func (v numericValue) pgNumeric() pgtype.Numeric {
	if !v.valid {
		return pgtype.Numeric{}
	}
	n := v.abs.Big()
	if v.neg {
		n.Neg(n)
	}
	return pgtype.Numeric{Int: n, Valid: true}
}
