package near

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"strconv"
)

// U128 is an unsigned 128-bit integer, as NEAR uses for balances and supplies.
// It encodes to JSON as a decimal string.
type U128 struct {
	Hi, Lo uint64
}

// U128From64 returns v as a U128.
func U128From64(v uint64) U128 { return U128{Lo: v} }

var errU128Overflow = errors.New("u128 overflow")

// Add returns a+b, or an error when it overflows.
func (a U128) Add(b U128) (U128, error) {
	return a.carried(b, bits.Add64)
}

// Sub returns a-b, or an error when b > a.
func (a U128) Sub(b U128) (U128, error) {
	return a.carried(b, bits.Sub64)
}

// carried applies op (bits.Add64 or bits.Sub64) to the low halves of a and
// b, then to the high halves with the low halves' carry (or borrow); one
// out of the high halves is an overflow.
func (a U128) carried(b U128, op func(x, y, carry uint64) (uint64, uint64)) (U128, error) {
	lo, carry := op(a.Lo, b.Lo, 0)
	hi, carry := op(a.Hi, b.Hi, carry)
	if carry != 0 {
		return U128{}, errU128Overflow
	}
	return U128{Hi: hi, Lo: lo}, nil
}

// Mul64 returns a*m, or an error when it overflows.
func (a U128) Mul64(m uint64) (U128, error) {
	hiLo, lo := bits.Mul64(a.Lo, m)
	hiHi, hi := bits.Mul64(a.Hi, m)
	hi, carry := bits.Add64(hi, hiLo, 0)
	if hiHi != 0 || carry != 0 {
		return U128{}, errU128Overflow
	}
	return U128{Hi: hi, Lo: lo}, nil
}

// Cmp compares a and b: -1, 0 or +1.
func (a U128) Cmp(b U128) int {
	switch {
	case a.Hi < b.Hi:
		return -1
	case a.Hi > b.Hi:
		return 1
	case a.Lo < b.Lo:
		return -1
	case a.Lo > b.Lo:
		return 1
	}
	return 0
}

// IsZero reports whether a is 0.
func (a U128) IsZero() bool { return a.Hi == 0 && a.Lo == 0 }

// Big returns a as a big.Int.
func (a U128) Big() *big.Int {
	b := new(big.Int).SetUint64(a.Hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(a.Lo))
}

// String returns the decimal digits of a.
func (a U128) String() string {
	if a.Hi == 0 {
		return strconv.FormatUint(a.Lo, 10)
	}
	return a.Big().String()
}

// LittleEndian returns the 16-byte little-endian form used by NEAR's host
// functions and borsh.
func (a U128) LittleEndian() []byte {
	out := make([]byte, 16)
	binary.LittleEndian.PutUint64(out[:8], a.Lo)
	binary.LittleEndian.PutUint64(out[8:], a.Hi)
	return out
}

// ParseU128 parses decimal digits into a U128.
func ParseU128(s string) (U128, error) {
	if s == "" || len(s) > 39 {
		return U128{}, fmt.Errorf("parse u128 %q: want 1 to 39 decimal digits", s)
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return U128{}, fmt.Errorf("parse u128 %q: not a decimal number", s)
		}
	}
	v, ok := digitsU128(s)
	if !ok {
		return U128{}, fmt.Errorf("parse u128 %q: %w", s, errU128Overflow)
	}
	return v, nil
}

// digitsU128 returns the value of s, 1 to 39 decimal digits; ok is false
// when it does not fit in 128 bits.
func digitsU128[S string | []byte](s S) (v U128, ok bool) {
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if v.Hi == 0 && v.Lo < (1<<64-1)/10-9 {
			v.Lo = v.Lo*10 + d
			continue
		}
		hiLo, lo := bits.Mul64(v.Lo, 10)
		hiHi, hi := bits.Mul64(v.Hi, 10)
		hi, carry := bits.Add64(hi, hiLo, 0)
		if hiHi != 0 || carry != 0 {
			return U128{}, false
		}
		lo, carry = bits.Add64(lo, d, 0)
		hi, carry = bits.Add64(hi, 0, carry)
		if carry != 0 {
			return U128{}, false
		}
		v = U128{Hi: hi, Lo: lo}
	}
	return v, true
}

// MarshalJSON encodes a as a JSON string of decimal digits.
func (a U128) MarshalJSON() ([]byte, error) {
	return []byte(`"` + a.String() + `"`), nil
}

// UnmarshalJSON decodes a JSON string of decimal digits.
func (a *U128) UnmarshalJSON(data []byte) error {
	// The common form, 1 to 39 digits in quotes, without a string.
	if n := len(data); n >= 3 && n <= 41 && data[0] == '"' && data[n-1] == '"' && allDigits(data[1:n-1]) {
		if v, ok := digitsU128(data[1 : n-1]); ok {
			*a = v
			return nil
		}
	}
	s, ok := plainString(data)
	if !ok {
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("decode u128: %w", err)
		}
	}
	v, err := ParseU128(s)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// allDigits reports whether b is only decimal digits.
func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
