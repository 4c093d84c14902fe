package docsource

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/fastjson"
	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/near"
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
	cpu := float64(cpuTime(b)-start) / float64(b.N)
	b.ReportMetric(cpu/1e6, "cpu-ms/op")
	b.ReportMetric(float64(len(body))/cpu*1e3, "cpu-MB/s")
}

// typedDocument is the document decoded whole into near's views by a
// general decoder: what BenchmarkDecodeRealDocument's one pass is
// measured against.
type typedDocument struct {
	Block  near.BlockView `json:"block"`
	Shards []struct {
		ShardID uint64 `json:"shard_id"`
		Chunk   *struct {
			Author       string               `json:"author"`
			Header       near.ChunkHeaderView `json:"header"`
			Transactions []struct {
				Transaction near.SignedTransactionView `json:"transaction"`
				Outcome     struct {
					ExecutionOutcome near.ExecutionOutcomeWithIDView `json:"execution_outcome"`
				} `json:"outcome"`
			} `json:"transactions"`
			Receipts []near.ReceiptView `json:"receipts"`
		} `json:"chunk"`
		ReceiptExecutionOutcomes []struct {
			ExecutionOutcome near.ExecutionOutcomeWithIDView `json:"execution_outcome"`
			Receipt          near.ReceiptView                `json:"receipt"`
			TxHash           *string                         `json:"tx_hash"`
		} `json:"receipt_execution_outcomes"`
		StateChanges []near.StateChangeWithCauseView `json:"state_changes"`
	} `json:"shards"`
}

// BenchmarkDecodeRealDocumentEncodingJSON decodes the real mainnet
// document into near's views with encoding/json, in the same run as
// BenchmarkDecodeRealDocument, for its MB/s.
func BenchmarkDecodeRealDocumentEncodingJSON(b *testing.B) {
	benchRealDocument(b, func(body []byte) error {
		var d typedDocument
		return json.Unmarshal(body, &d)
	})
}

// BenchmarkDecodeRealDocumentGoccy decodes the real mainnet document into
// near's views with goccy/go-json (the decoder the views used before the
// one pass).
func BenchmarkDecodeRealDocumentGoccy(b *testing.B) {
	benchRealDocument(b, func(body []byte) error {
		var d typedDocument
		return fastjson.Unmarshal(body, &d)
	})
}
