package near

import (
	"math/big"
	"strings"
	"testing"
)

// bigU128 parses s as ParseU128 did with math/big: ok is false for what
// it refuses.
func bigU128(s string) (U128, bool) {
	if s == "" || len(s) > 39 || strings.Trim(s, "0123456789") != "" {
		return U128{}, false
	}
	b, _ := new(big.Int).SetString(s, 10)
	if b.BitLen() > 128 {
		return U128{}, false
	}
	lo := new(big.Int).And(b, new(big.Int).SetUint64(^uint64(0)))
	return U128{Hi: new(big.Int).Rsh(b, 64).Uint64(), Lo: lo.Uint64()}, true
}

func checkU128(t *testing.T, s string) {
	t.Helper()
	want, wantOK := bigU128(s)
	got, err := ParseU128(s)
	if (err == nil) != wantOK || got != want {
		t.Fatalf("ParseU128(%q) = %v, %v; want %v, ok %v", s, got, err, want, wantOK)
	}
	var j U128
	err = j.UnmarshalJSON([]byte(`"` + s + `"`))
	if (err == nil) != wantOK || j != want {
		t.Fatalf("UnmarshalJSON(%q) = %v, %v; want %v, ok %v", s, j, err, want, wantOK)
	}
	if wantOK && got.String() != got.Big().String() {
		t.Fatalf("String() = %s, want %s", got.String(), got.Big())
	}
}

func TestParseU128AgreesWithBig(t *testing.T) {
	max := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))
	for _, s := range []string{
		"0", "1", "9", "10", "007", "18446744073709551615", "18446744073709551616",
		"1844674407370955161", "1844674407370955162", "18446744073709551610",
		"340282366920938463463374607431768211455", "340282366920938463463374607431768211456",
		"999999999999999999999999999999999999999", "1000000000000000000000000000000000000000",
		max.String(), "", "-1", "1e3", " 1", "12a",
		"1000000000000000000000000", "100000000000000000000000000000000",
	} {
		checkU128(t, s)
	}
}

func FuzzParseU128(f *testing.F) {
	f.Add("340282366920938463463374607431768211455")
	f.Add("18446744073709551616")
	f.Fuzz(checkU128)
}
