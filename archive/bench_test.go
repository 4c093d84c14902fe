package archive

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/nearline/nearline/internal/rpctest"
	"github.com/nearline/nearline/rpcserve"
)

// BenchmarkArchive measures whole requests through the handler against a
// real Postgres archive (the seeded chain).
func BenchmarkArchive(b *testing.B) {
	h := archiveHandler(b, seedStore(b), rpcserve.Config{}, Config{})
	args := base64.StdEncoding.EncodeToString([]byte(`{"account_id":"bob.near"}`))
	cases := []struct{ name, body string }{
		{"block_by_height", `{"id":1,"method":"block","params":{"block_id":11}}`},
		{"block_final", `{"id":1,"method":"block","params":{"finality":"final"}}`},
		{"chunk_by_block_shard", `{"id":1,"method":"chunk","params":{"block_id":11,"shard_id":0}}`},
		{"view_account", `{"id":1,"method":"query","params":{"request_type":"view_account","account_id":"alice.near","block_id":11}}`},
		{"view_state", `{"id":1,"method":"query","params":{"request_type":"view_state","account_id":"status.near","prefix_base64":"","block_id":11}}`},
		{"call_function", `{"id":1,"method":"query","params":{"request_type":"call_function","account_id":"status.near","method_name":"get_status","args_base64":"` + args + `","finality":"final"}}`},
		{"changes", `{"id":1,"method":"changes","params":{"changes_type":"account_changes","account_ids":["alice.near"],"block_id":11}}`},
		{"parse_error", `{"id":1,"method":"block","params":{"finality":"final","block_id":1}}`},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				rec := rpctest.Serve(h, c.body)
				if rec.Code != http.StatusOK || !json.Valid(rec.Body.Bytes()) {
					b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}

// BenchmarkArchiveParallel measures concurrent view_account and block
// requests (the test store's pool has 4 connections).
func BenchmarkArchiveParallel(b *testing.B) {
	h := archiveHandler(b, seedStore(b), rpcserve.Config{}, Config{})
	bodies := []string{
		`{"id":1,"method":"query","params":{"request_type":"view_account","account_id":"alice.near","block_id":11}}`,
		`{"id":1,"method":"block","params":{"block_id":11}}`,
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			rec := rpctest.Serve(h, bodies[i%2])
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d", rec.Code)
			}
			i++
		}
	})
}
