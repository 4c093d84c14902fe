package near_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/nearline/nearline/internal/fastjson"
	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/near"
)

// documentChunks returns the chunks of the recorded block documents and
// Lake shard files, compact, each as the `chunk` answer is built from it
// (transactions without their outcomes).
func documentChunks(tb testing.TB) [][]byte {
	var out [][]byte
	add := func(raw json.RawMessage) {
		if len(raw) == 0 || string(raw) == "null" {
			return
		}
		ms, err := jsonobject.Members(raw)
		if err != nil {
			tb.Fatal(err)
		}
		var kept []jsonobject.Member
		for _, m := range ms {
			switch m.Key {
			case "local_receipts", "instant_receipts":
				continue
			case "transactions":
				items, err := jsonobject.Items(m.Value)
				if err != nil {
					tb.Fatal(err)
				}
				var txs []json.RawMessage
				for _, it := range items {
					var tx struct {
						Transaction json.RawMessage `json:"transaction"`
					}
					if err := json.Unmarshal(it, &tx); err != nil {
						tb.Fatal(err)
					}
					txs = append(txs, tx.Transaction)
				}
				m.Value = jsonobject.Array(txs)
			}
			kept = append(kept, m)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, jsonobject.Object(kept)); err != nil {
			tb.Fatal(err)
		}
		out = append(out, buf.Bytes())
	}
	files := append(fixture.Glob(tb, "real/neardata/*.json"), fixture.Glob(tb, "lake/*shard*.json")...)
	for _, path := range files {
		var doc struct {
			Shards []struct {
				Chunk json.RawMessage `json:"chunk"`
			} `json:"shards"`
			Chunk json.RawMessage `json:"chunk"`
		}
		body, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			tb.Fatal(path, err)
		}
		add(doc.Chunk)
		for _, sh := range doc.Shards {
			add(sh.Chunk)
		}
	}
	if len(out) == 0 {
		tb.Fatal("no chunks")
	}
	return out
}

// sameAsGeneral checks that fast decodes raw as the general decoder
// does, value and error alike.
func sameAsGeneral[T any](t *testing.T, raw []byte, fast func([]byte, *T) error) {
	t.Helper()
	var want, got T
	wantErr := fastjson.Unmarshal(raw, &want)
	gotErr := fast(raw, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("error %v, the general decoder's %v, for %s", gotErr, wantErr, raw)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded differently from the general decoder:\n got %+v\nwant %+v\nfor %s", got, want, raw)
	}
}

// TestDecodeChunkViewAgreesOnRecordedChunks: every recorded chunk (mainnet,
// testnet, localnet with delegate actions) decodes as the general decoder
// decodes it.
func TestDecodeChunkViewAgreesOnRecordedChunks(t *testing.T) {
	t.Parallel()
	for _, raw := range documentChunks(t) {
		sameAsGeneral(t, raw, near.DecodeChunkView)
	}
}

// TestDecodeChunkViewAgreesOnOtherShapes: shapes the fast pass passes to
// the general decoder (unknown members and variants, names in another
// case, repeated members, escapes, nulls, non-canonical delegates) decode
// as the general decoder decodes them.
func TestDecodeChunkViewAgreesOnOtherShapes(t *testing.T) {
	t.Parallel()
	const tx = `{"signer_id":"a.near","public_key":"ed25519:x","nonce":18446744073709551615,"receiver_id":"b.near","actions":[%s],"priority_fee":0,"signature":"ed25519:s","hash":"h"}`
	const rc = `{"predecessor_id":"a","receiver_id":"b","receipt_id":"r","receipt":%s,"priority":0}`
	for _, part := range []string{
		`"CreateAccount"`, `"Other"`, `{"Transfer":{"deposit":"1"}}`, `{"Transfer":{"Deposit":"1"}}`,
		`{"Transfer":{"deposit":"1","deposit":"2"}}`, `{"Transfer":{"deposit":"007"}}`, `{"Transfer":null}`,
		`{"FunctionCall":{"method_name":"m","args":"","gas":1,"deposit":"0"}}`,
		`{"FunctionCall":{"method_name":"m\u0041","args":"e30=","gas":1,"deposit":"0"}}`,
		`{"FunctionCall":{"method_name":"m","args":"e31=","gas":1,"deposit":"0"}}`,
		`{"FunctionCall":{"method_name":"m","args":"e30","gas":1,"deposit":"0"}}`,
		`{"FunctionCall":{"method_name":"m","args":"e30=","gas":1.0,"deposit":"0"}}`,
		`{"FunctionCall":{"method_name":"m","args":"e30=","gas":1,"deposit":"0","extra":1}}`,
		`{"NewKind":{"x":1}}`, `{"Transfer":{"deposit":"1"},"Stake":{}}`,
		`{"Delegate":{"delegate_action":{"sender_id":"a","receiver_id":"b","actions":[{"Transfer":{"deposit":"1"}}],"nonce":1,"max_block_height":2,"public_key":"k"},"signature":"s"}}`,
		`{"Delegate":{"delegate_action":{"sender_id":"a","receiver_id":"b","actions":[],"nonce":1,"max_block_height":2,"public_key":"k"},"signature":"s"}}`,
		`{"Delegate":{"delegate_action":{"receiver_id":"b","sender_id":"a","actions":[],"nonce":1,"max_block_height":2,"public_key":"k"},"signature":"s"}}`,
		`{"Delegate":{"delegate_action":{"sender_id":"a<","receiver_id":"b","actions":[],"nonce":1,"max_block_height":2,"public_key":"k"},"signature":"s"}}`,
		`{"Delegate":{"delegate_action":{"sender_id":"a","receiver_id":"b","actions":[{"Transfer":{"deposit":"01"}}],"nonce":1,"max_block_height":2,"public_key":"k"},"signature":"s"}}`,
		`{"Delegate":{"delegate_action":{"sender_id":"a","receiver_id":"b","actions":[{"FunctionCall":{"method_name":"m","args":"e31=","gas":1,"deposit":"0"}}],"nonce":1,"max_block_height":2,"public_key":"k"},"signature":"s"}}`,
		`{"Delegate":{"delegate_action":{"sender_id":"a","receiver_id":"b","actions":[{"Delegate":{}}],"nonce":1,"max_block_height":2,"public_key":"k"},"signature":"s"}}`,
		`{"Delegate":{"delegate_action":{"sender_id":"a","receiver_id":"b","actions":[],"nonce":1,"max_block_height":2},"signature":"s"}}`,
	} {
		sameAsGeneral(t, []byte(`{"author":"x","header":{},"transactions":[`+sprintf(tx, part)+`],"receipts":[]}`), near.DecodeChunkView)
		sameAsGeneral(t, []byte(`{"author":"x","header":{},"transactions":[],"receipts":[`+sprintf(rc, `{"Action":{"signer_id":"a","signer_public_key":"k","gas_price":"1","output_data_receivers":[],"input_data_ids":[],"actions":[`+part+`],"is_promise_yield":false}}`)+`]}`), near.DecodeChunkView)
	}
	for _, receipt := range []string{
		`{"Data":{"data_id":"d","data":null,"is_promise_resume":true}}`, `{"Data":{"data_id":"d","data":"AA==","is_promise_resume":false}}`,
		`{"Data":{"data_id":"d","data":""}}`, `{"Data":null}`, `{"Action":null}`, `{"GlobalContractDistribution":{}}`,
		`{"Action":{"signer_id":"a","output_data_receivers":[{"data_id":"d","receiver_id":"r"}],"input_data_ids":["x","y"],"actions":null}}`,
		`{"Action":{"signer_id":"a","gas_price":"340282366920938463463374607431768211456"}}`,
		`{"Action":{},"Data":{}}`, `{"action":{}}`,
	} {
		sameAsGeneral(t, []byte(`{"author":"x","header":{},"transactions":[],"receipts":[`+sprintf(rc, receipt)+`]}`), near.DecodeChunkView)
	}
	for _, chunk := range []string{
		`{"author":"x","header":{},"transactions":null,"receipts":[]}`, `{"author":"x","Header":{},"transactions":[],"receipts":[]}`,
		`{"author":"x","header":{},"transactions":[],"receipts":[],"new":1}`, `{"author":"x"}`, `{}`, `null`, `[]`,
		`{"author":"x","header":{"height_created":-1},"transactions":[],"receipts":[]}`,
		`{"author":"x","header":{},"transactions":[{"nonce":-1}],"receipts":[]}`,
	} {
		sameAsGeneral(t, []byte(chunk), near.DecodeChunkView)
	}
}

func sprintf(format, part string) string {
	return string(bytes.Replace([]byte(format), []byte("%s"), []byte(part), 1))
}

// FuzzDecodeChunkView: any input decodes as the general decoder decodes it.
func FuzzDecodeChunkView(f *testing.F) {
	for _, raw := range documentChunks(f) {
		if len(raw) < 64<<10 {
			f.Add(raw)
		}
	}
	f.Add([]byte(`{"author":"x","header":{},"transactions":[],"receipts":[{"predecessor_id":"a","receiver_id":"b","receipt_id":"r","receipt":{"Action":{"signer_id":"a","signer_public_key":"k","gas_price":"1","output_data_receivers":[],"input_data_ids":[],"actions":[{"Delegate":{"delegate_action":{"sender_id":"a","receiver_id":"b","actions":[{"FunctionCall":{"method_name":"m","args":"e30=","gas":1,"deposit":"0"}}],"nonce":1,"max_block_height":2,"public_key":"k"},"signature":"s"}}],"is_promise_yield":false}},"priority":0}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			return
		}
		sameAsGeneral(t, buf.Bytes(), near.DecodeChunkView)
	})
}

// BenchmarkDecodeChunkView decodes the real mainnet document's chunks with
// the fast pass and with the general decoder.
func BenchmarkDecodeChunkView(b *testing.B) {
	var chunks [][]byte
	size := 0
	for _, raw := range documentChunks(b) {
		chunks = append(chunks, raw)
		size += len(raw)
	}
	for _, c := range []struct {
		name   string
		decode func([]byte, *near.ChunkView) error
	}{
		{"fast", near.DecodeChunkView},
		{"goccy", func(raw []byte, v *near.ChunkView) error { return fastjson.Unmarshal(raw, v) }},
		{"encoding-json", func(raw []byte, v *near.ChunkView) error { return json.Unmarshal(raw, v) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, raw := range chunks {
					var v near.ChunkView
					if err := c.decode(raw, &v); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// documentChanges returns the state changes of the recorded documents.
func documentChanges(tb testing.TB) [][]byte {
	var out [][]byte
	for _, path := range fixture.Glob(tb, "real/neardata/*.json") {
		body, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		var doc struct {
			Shards []struct {
				StateChanges []json.RawMessage `json:"state_changes"`
			} `json:"shards"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			tb.Fatal(path, err)
		}
		for _, sh := range doc.Shards {
			for _, raw := range sh.StateChanges {
				var buf bytes.Buffer
				if err := json.Compact(&buf, raw); err != nil {
					tb.Fatal(err)
				}
				out = append(out, buf.Bytes())
			}
		}
	}
	return out
}

// TestDecodeStateChangeAgrees: the recorded state changes, and shapes the
// fast pass passes on, decode as the general decoder decodes them.
func TestDecodeStateChangeAgrees(t *testing.T) {
	t.Parallel()
	for _, raw := range documentChanges(t) {
		sameAsGeneral(t, raw, near.DecodeStateChange)
	}
	for _, raw := range []string{
		`{"cause":{"type":"receipt_processing","receipt_hash":"h"},"type":"data_update","change":{"account_id":"a","key_base64":"AA==","value_base64":""}}`,
		`{"cause":{"type":"receipt_processing","receipt_hash":"h"},"type":"data_deletion","change":{"account_id":"a","key_base64":"AA=="}}`,
		`{"cause":{"type":"x","Receipt_Hash":"h"},"type":"data_update","change":{"account_id":"a","key_base64":"AA=="}}`,
		`{"cause":{"type":"x"},"type":"data_update","change":{"account_id":"a","key_base64":"AA=","value_base64":null}}`,
		`{"cause":{"type":"x"},"type":"account_update","change":{"account_id":"a","amount":"1","locked":"0","code_hash":"c","storage_usage":1,"storage_paid_at":0}}`,
		`{"cause":{"type":"x"},"type":"data_update","change":{"account_id":"a","amount":"1"}}`,
		`{"cause":{"type":"x"},"type":"data_update","change":{"account_id":"a","key_base64":"AA==","key_base64":"AQ=="}}`,
		`{"cause":null,"type":"data_update","change":{}}`, `{}`, `null`, `{"type":1}`,
		`{"cause":{"type":"x"},"type":"account_update","change":{"account_id":"a","amount":"1","locked":"0","code_hash":"c","storage_usage":1,"storage_paid_at":0,"global_contract_hash":"g"}}`,
		`{"cause":{"type":"x"},"type":"account_update","change":{"account_id":"a","Amount":"1"}}`,
		`{"cause":{"type":"x"},"type":"account_update","change":{"storage_usage":1,"account_id":"a"}}`,
		`{"cause":{"type":"x"},"type":"access_key_update","change":{"account_id":"a","public_key":"ed25519:k","access_key":{"nonce":1,"permission":"FullAccess"}}}`,
		`{"cause":{"type":"x"},"type":"access_key_update","change":{"account_id":"a","public_key":"ed25519:k","access_key":{"nonce":1,"permission":{"FunctionCall":{"allowance":null,"receiver_id":"r","method_names":[]}},"new":2}}}`,
		`{"cause":{"type":"x"},"type":"access_key_update","change":{"account_id":"a","public_key":null,"access_key":null}}`,
		`{"cause":{"type":"x"},"type":"access_key_deletion","change":{"account_id":"a","public_key":"ed25519:k"}}`,
	} {
		sameAsGeneral(t, []byte(raw), near.DecodeStateChange)
	}
}

// FuzzDecodeStateChange: any input decodes as the general decoder decodes it.
func FuzzDecodeStateChange(f *testing.F) {
	for i, raw := range documentChanges(f) {
		if i%50 == 0 {
			f.Add(raw)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			return
		}
		sameAsGeneral(t, buf.Bytes(), near.DecodeStateChange)
	})
}
