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
	benchRealDocument(b, func(body []byte) error {
		d, err := decodeDocument(body)
		if err == nil {
			_, err = parseDocument(d)
		}
		return err
	})
}

// BenchmarkSplitRealDocument takes the real mainnet document apart into
// its parts (decodeDocument alone: jsonobject's compact scan), without
// decoding the views.
func BenchmarkSplitRealDocument(b *testing.B) {
	benchRealDocument(b, func(body []byte) error {
		_, err := decodeDocument(body)
		return err
	})
}

// benchRealDocument runs decode on the real mainnet document, reporting
// cpu-ms/op beside ns/op.
func benchRealDocument(b *testing.B, decode func(body []byte) error) {
	body := fixture.Read(b, "real/neardata/mainnet-151768255.json")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		if err := decode(body); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N)/1e6, "cpu-ms/op")
}
