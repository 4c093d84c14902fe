package near

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCongestionLevel(t *testing.T) {
	t.Parallel()
	cfg := CongestionControlConfig{MaxCongestionIncomingGas: 1000, MaxCongestionOutgoingGas: 100, MaxCongestionMemoryConsumption: 10}
	cases := []struct {
		name string
		info *CongestionInfo
		want float64
	}{
		{"no congestion info is 0", nil, 0},
		{"all zero", &CongestionInfo{AllowedShard: 3}, 0},
		{"incoming", &CongestionInfo{DelayedReceiptsGas: U128From64(500)}, 0.5},
		{"outgoing", &CongestionInfo{BufferedReceiptsGas: U128From64(25)}, 0.25},
		{"memory", &CongestionInfo{ReceiptBytes: 8}, 0.8},
		{"the largest wins", &CongestionInfo{DelayedReceiptsGas: U128From64(100), BufferedReceiptsGas: U128From64(30), ReceiptBytes: 2}, 0.3},
		{"at the limit is 1", &CongestionInfo{BufferedReceiptsGas: U128From64(100)}, 1},
		{"above u64 clamps to 1", &CongestionInfo{DelayedReceiptsGas: U128{Hi: 1}}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, CongestionLevel(tc.info, cfg))
		})
	}
}

func TestCongestionConfigOf(t *testing.T) {
	t.Parallel()
	cfg, err := CongestionConfigOf([]byte(`{"protocol_version":73,"runtime_config":{"congestion_control_config":{"max_congestion_incoming_gas":400000000000000000,"max_congestion_outgoing_gas":10000000000000000,"max_congestion_memory_consumption":1000000000,"max_congestion_missed_chunks":5}}}`))
	require.NoError(t, err)
	require.Equal(t, CongestionControlConfig{MaxCongestionIncomingGas: 400_000_000_000_000_000, MaxCongestionOutgoingGas: 10_000_000_000_000_000, MaxCongestionMemoryConsumption: 1_000_000_000}, cfg)
	_, err = CongestionConfigOf([]byte(`{"runtime_config":{}}`))
	require.ErrorIs(t, err, errNoCongestionConfig)
}
