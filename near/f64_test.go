package near

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFormatF64 holds what serde_json (ryu) writes for each value.
func TestFormatF64(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-1, "-1.0"},
		{0.5, "0.5"},
		{0.8, "0.8"},
		{math.Nextafter(0.3, 1), "0.30000000000000004"},
		{1.0 / 3, "0.3333333333333333"},
		{12.34, "12.34"},
		{100, "100.0"},
		{0.001234, "0.001234"},
		{0.0001, "0.0001"},
		{0.00001, "0.00001"},
		{0.000001, "1e-6"},
		{0.000015, "0.000015"},
		{1e-7, "1e-7"},
		{1.5e-7, "1.5e-7"},
		{2.5e-4, "0.00025"},
		{7.5e-4, "0.00075"},
		{123456789e-13, "0.0000123456789"},
		{123456789e-14, "1.23456789e-6"},
		{1e15, "1000000000000000.0"},
		{1e16, "1e16"},
		{1.5e16, "1.5e16"},
		{123456789012345678, "1.2345678901234568e17"},
		{1234567890123456, "1234567890123456.0"},
		{1e100, "1e100"},
		{-2.5e-300, "-2.5e-300"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e308"},
		{math.NaN(), "null"},
		{math.Inf(1), "null"},
	}
	for _, tc := range cases {
		t.Run(strconv.FormatFloat(tc.in, 'g', -1, 64), func(t *testing.T) {
			t.Parallel()
			got := FormatF64(tc.in)
			require.Equal(t, tc.want, got)
			if tc.want != "null" {
				back, err := strconv.ParseFloat(got, 64)
				require.NoError(t, err)
				require.Equal(t, tc.in, back, "round trip")
			}
		})
	}
}

func TestF64MarshalsInsideAnObject(t *testing.T) {
	t.Parallel()
	out, err := json.Marshal(CongestionLevelView{CongestionLevel: 1e-7})
	require.NoError(t, err)
	require.Equal(t, `{"congestion_level":1e-7}`, string(out))
}
