package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseBytesReadsSizesWithUnits(t *testing.T) {
	for in, want := range map[string]int64{"192MiB": 192 << 20, "1GiB": 1 << 30, "1.5G": 3 << 29, "500MB": 500e6, "64K": 64 << 10, "268435456": 268435456, " 2 GiB ": 2 << 30} {
		got, err := parseBytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "MiB", "-1MiB", "0", "ten", "1TiB"} {
		_, err := parseBytes(in)
		require.Error(t, err, in)
	}
	require.Equal(t, "192MiB", formatBytes(192<<20))
	require.Equal(t, "1GiB", formatBytes(1<<30))
}
