package docsource

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/fastjson"
	"github.com/nearline/nearline/internal/fixture"
)

// recordedOutcomes returns the execution outcomes of the recorded block
// documents, compact: receipts' and transactions'.
func recordedOutcomes(tb testing.TB) [][]byte {
	var out [][]byte
	add := func(raw json.RawMessage) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			tb.Fatal(err)
		}
		out = append(out, buf.Bytes())
	}
	for _, path := range fixture.Glob(tb, "real/neardata/*.json") {
		body, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		var doc struct {
			Shards []struct {
				Chunk *struct {
					Transactions []struct {
						Outcome struct {
							ExecutionOutcome json.RawMessage `json:"execution_outcome"`
						} `json:"outcome"`
					} `json:"transactions"`
				} `json:"chunk"`
				Outcomes []struct {
					ExecutionOutcome json.RawMessage `json:"execution_outcome"`
				} `json:"receipt_execution_outcomes"`
			} `json:"shards"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			tb.Fatal(path, err)
		}
		for _, sh := range doc.Shards {
			if sh.Chunk != nil {
				for _, tx := range sh.Chunk.Transactions {
					add(tx.Outcome.ExecutionOutcome)
				}
			}
			for _, o := range sh.Outcomes {
				add(o.ExecutionOutcome)
			}
		}
	}
	return out
}

func sameOutcomeAsGeneral(t *testing.T, raw []byte) {
	t.Helper()
	var want, got bundle.OutcomeFields
	wantErr := fastjson.Unmarshal(raw, &want)
	gotErr := decodeOutcomeFields(raw, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("error %v, the general decoder's %v, for %s", gotErr, wantErr, raw)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded differently from the general decoder:\n got %+v\nwant %+v\nfor %s", got, want, raw)
	}
}

// TestDecodeOutcomeFieldsAgrees: recorded outcomes, and shapes the fast
// pass passes on, decode as the general decoder decodes them.
func TestDecodeOutcomeFieldsAgrees(t *testing.T) {
	t.Parallel()
	for _, raw := range recordedOutcomes(t) {
		sameOutcomeAsGeneral(t, raw)
	}
	const o = `{"proof":[],"block_hash":"b","id":"i","outcome":{"logs":%s,"receipt_ids":%s,"gas_burnt":%s,"tokens_burnt":%s,"executor_id":"e","status":%s,"metadata":{}}}`
	for _, parts := range [][5]string{
		{`[]`, `[]`, `1`, `"0"`, `{"SuccessValue":""}`},
		{`null`, `null`, `1`, `"0"`, `null`},
		{`["a\"b"]`, `["x","y"]`, `18446744073709551615`, `"340282366920938463463374607431768211455"`, `"Unknown"`},
		{`[]`, `["x\u0041"]`, `1`, `"0"`, `{}`},
		{`[]`, `[]`, `18446744073709551616`, `"0"`, `{}`},
		{`[]`, `[]`, `1.5`, `"0"`, `{}`},
		{`[]`, `[]`, `-1`, `"0"`, `{}`},
		{`[]`, `[]`, `1`, `"007"`, `{}`},
		{`[]`, `[]`, `1`, `"340282366920938463463374607431768211456"`, `{}`},
		{`[]`, `[]`, `1`, `0`, `{}`},
		{`[]`, `[]`, `1`, `null`, `{}`},
	} {
		s := o
		for _, p := range parts {
			s = string(bytes.Replace([]byte(s), []byte("%s"), []byte(p), 1))
		}
		sameOutcomeAsGeneral(t, []byte(s))
	}
	for _, raw := range []string{
		`null`, `{}`, `{"ID":"x"}`, `{"id":"x","id":"y"}`, `{"id":"x","outcome":null}`, `{"id":"x","other":1}`,
		`{"id":"x","outcome":{"Executor_ID":"e"}}`, `{"id":"x","outcome":{"new":[1]}}`, `[]`,
	} {
		sameOutcomeAsGeneral(t, []byte(raw))
	}
}

// FuzzDecodeOutcomeFields: any input decodes as the general decoder
// decodes it.
func FuzzDecodeOutcomeFields(f *testing.F) {
	for i, raw := range recordedOutcomes(f) {
		if i%40 == 0 {
			f.Add(raw)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			return
		}
		sameOutcomeAsGeneral(t, buf.Bytes())
	})
}
