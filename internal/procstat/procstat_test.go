package procstat

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	// utime 150, stime 50, cutime 7, cstime 3 ticks; the command name
	// holds a space.
	const stat = "42 (a b) S 1 42 42 0 -1 4194304 100 0 0 0 150 50 7 3 20 0 1 0 100 1000 10"
	own, err := parseStat(stat, false)
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, own)
	all, err := parseStat(stat, true)
	require.NoError(t, err)
	require.Equal(t, 2100*time.Millisecond, all)
	_, err = parseStat("42 (x) S 1 2", false)
	require.Error(t, err)
	_, err = parseStat("no command name", false)
	require.Error(t, err)
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       Memory
		wantErr    bool
	}{
		{name: "peak and resident", text: "Name:\tnearline\nVmPeak:\t  900 kB\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n",
			want: Memory{Peak: 2048 << 10, Resident: 1024 << 10}},
		{name: "no VmRSS", text: "VmHWM:\t 4 kB\n", want: Memory{Peak: 4 << 10}},
		{name: "no VmHWM", text: "Name:\tnearline\nVmRSS:\t 4 kB\n", wantErr: true},
		{name: "malformed VmHWM", text: "VmHWM:\t x kB\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseStatus([]byte(tc.text))
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestReadsItsOwnProcess needs Linux's /proc, as the benchmarks and the
// reliability tests that use the package do.
func TestReadsItsOwnProcess(t *testing.T) {
	t.Parallel()
	m, err := ReadMemory(os.Getpid())
	require.NoError(t, err)
	require.Positive(t, m.Peak)
	require.Positive(t, m.Resident)
	_, err = ReadCPU(os.Getpid(), true)
	require.NoError(t, err)
}
