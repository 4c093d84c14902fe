package packed_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/internal/jsonobject"
)

// realGroups takes the real mainnet document apart into the lists the
// store packs per block: each shard's chunk alone, the block's state
// changes, and its outcomes with their receipts and transactions (which
// is what the transaction statuses are assembled from).
func realGroups(tb testing.TB) [][]json.RawMessage {
	body := fixture.Read(tb, "real/neardata/mainnet-151768255.json")
	var groups [][]json.RawMessage
	var changes, statuses []json.RawMessage
	shards, err := memberOf(body, "shards")
	if err != nil {
		tb.Fatal(err)
	}
	list, err := jsonobject.Items(shards)
	if err != nil {
		tb.Fatal(err)
	}
	for _, sh := range list {
		ms, err := jsonobject.Members(sh)
		if err != nil {
			tb.Fatal(err)
		}
		for _, m := range ms {
			switch m.Key {
			case "chunk":
				if string(m.Value) != "null" {
					groups = append(groups, []json.RawMessage{m.Value})
					txs, _ := memberOf(m.Value, "transactions")
					items, _ := jsonobject.Items(txs)
					statuses = append(statuses, items...)
				}
			case "state_changes":
				items, _ := jsonobject.Items(m.Value)
				changes = append(changes, items...)
			case "receipt_execution_outcomes":
				items, _ := jsonobject.Items(m.Value)
				statuses = append(statuses, items...)
			}
		}
	}
	return append(groups, changes, statuses)
}

func memberOf(raw []byte, key string) (json.RawMessage, error) {
	ms, err := jsonobject.Members(raw)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.Key == key {
			return m.Value, nil
		}
	}
	return nil, fmt.Errorf("no %s", key)
}

// frame is what Pack compresses: uvarint(n), the n lengths, the values.
func frame(values []json.RawMessage) []byte {
	var body []byte
	body = binary.AppendUvarint(body, uint64(len(values)))
	for _, v := range values {
		body = binary.AppendUvarint(body, uint64(len(v)))
	}
	for _, v := range values {
		body = append(body, v...)
	}
	return body
}

// BenchmarkPackLevels compresses the real block's packed documents with
// each candidate encoder setting: KiB/block is what it stores, cpu-ms
// the process's CPU per block.
func BenchmarkPackLevels(b *testing.B) {
	var bodies [][]byte
	raw := 0
	for _, g := range realGroups(b) {
		bodies = append(bodies, frame(g))
		raw += len(bodies[len(bodies)-1])
	}
	zstdCase := func(opts ...zstd.EOption) func([]byte, []byte) []byte {
		enc, err := zstd.NewWriter(nil, append([]zstd.EOption{zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true)}, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		return func(dst, src []byte) []byte { return enc.EncodeAll(src, dst) }
	}
	cases := []struct {
		name string
		enc  func(dst, src []byte) []byte
	}{
		{"zstd-fastest", zstdCase(zstd.WithEncoderLevel(zstd.SpeedFastest))},
		{"zstd-fastest-nocrc", zstdCase(zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false))},
		{"zstd-fastest-nocrc-win256k", zstdCase(zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false), zstd.WithWindowSize(256<<10))},
		{"zstd-fastest-noentropy", zstdCase(zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false), zstd.WithNoEntropyCompression(true))},
		{"zstd-default", zstdCase(zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(false))},
		{"s2", func(dst, src []byte) []byte { return s2.Encode(dst[:cap(dst)], src) }},
		{"s2-better", func(dst, src []byte) []byte { return s2.EncodeBetter(dst[:cap(dst)], src) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(raw))
			b.ReportAllocs()
			dst := make([]byte, 0, s2.MaxEncodedLen(raw))
			out := 0
			start := cpuTime(b)
			for b.Loop() {
				out = 0
				for _, body := range bodies {
					out += len(c.enc(dst[:0], body))
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N)/1e6, "cpu-ms/block")
			b.ReportMetric(float64(out)/1024, "KiB/block")
			b.ReportMetric(float64(raw)/1024, "rawKiB/block")
		})
	}
}
