package docsource

import (
	"syscall"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/fixture"
)

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecodeRealDocument decodes the real mainnet document (1.7 MB)
// into what the Bundle is built from. cpu-ms/op is the process's CPU time
// (garbage collection included) per document, which a loaded machine
// disturbs less than ns/op.
func BenchmarkDecodeRealDocument(b *testing.B) {
	body := fixture.Read(b, "real/neardata/mainnet-151768255.json")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		d, err := decodeDocument(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := parseDocument(d); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N)/1e6, "cpu-ms/op")
}
