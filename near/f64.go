package near

import (
	"math"
	"strconv"
	"strings"
)

// F64 is a float64 that encodes as nearcore (serde_json, which uses ryu)
// writes an f64: the shortest digits that read back as the same value,
// laid out as ryu does: "0.0" and "1.0" for integral values, plain decimals
// while the decimal point falls within 16 digits (1e15 is
// "1000000000000000.0", 0.00001 is "0.00001"), exponent form beyond
// ("1e16", "1e-7", "1.5e-7"). NaN and infinities encode as null, as
// serde_json writes them. Go's encoding/json differs: 0, 1, 1e-7 becomes
// 1e-07, and 1e20 is written in full.
type F64 float64

// MarshalJSON writes f as serde_json would.
func (f F64) MarshalJSON() ([]byte, error) {
	return []byte(FormatF64(float64(f))), nil
}

// FormatF64 formats v as serde_json writes an f64 (see F64).
func FormatF64(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "null"
	}
	// 'e' with precision -1 gives the shortest round-trip digits:
	// "-d.ddde±XX".
	s := strconv.FormatFloat(v, 'e', -1, 64)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	mant, expText, _ := strings.Cut(s, "e")
	exp, err := strconv.Atoi(expText)
	if err != nil {
		return sign + s // unreachable: FormatFloat always writes an exponent
	}
	digits := strings.Replace(mant, ".", "", 1)
	if v == 0 {
		return sign + "0.0"
	}
	// The value is 0.digits × 10^point.
	point := exp + 1
	n := len(digits)
	switch {
	case n <= point && point <= 16:
		return sign + digits + strings.Repeat("0", point-n) + ".0"
	case 0 < point && point <= 16:
		return sign + digits[:point] + "." + digits[point:]
	case -5 < point && point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + digits
	case n == 1:
		return sign + digits + "e" + strconv.Itoa(point-1)
	default:
		return sign + digits[:1] + "." + digits[1:] + "e" + strconv.Itoa(point-1)
	}
}
