package bounds_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/bounds"
)

func TestAtLeast(t *testing.T) {
	require.NoError(t, bounds.AtLeast("workers", 1, 1))
	require.NoError(t, bounds.AtLeast("workers", 7, 1))
	require.EqualError(t, bounds.AtLeast("workers", 0, 1), "workers 0: want at least 1")
	require.EqualError(t, bounds.AtLeast("batch size", -3, 1), "batch size -3: want at least 1")
}

func TestNotNegative(t *testing.T) {
	require.NoError(t, bounds.NotNegative("poll interval", time.Duration(0)))
	require.NoError(t, bounds.NotNegative("poll interval", time.Second))
	require.EqualError(t, bounds.NotNegative("poll interval", -time.Second), "poll interval -1s: want positive")
	require.EqualError(t, bounds.NotNegative("retries", -2), "retries -2: want positive")
}

func TestAtMost(t *testing.T) {
	require.NoError(t, bounds.AtMost("memory limit pages", 65536, 65536))
	require.EqualError(t, bounds.AtMost("memory limit pages", 65537, 65536), "memory limit pages 65537: want at most 65536")
}
