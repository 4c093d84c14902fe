package docsource

import (
	"encoding/json"
	"testing"

	"github.com/nearline/nearline/internal/jsonobject"
)

// TestStatusJSONIsTheObjectOfItsMembers: the status written in one buffer
// is the object of its members, in near.FinalExecutionOutcomeView's order,
// receipts left out when there are none.
func TestStatusJSONIsTheObjectOfItsMembers(t *testing.T) {
	raw := func(s ...string) []json.RawMessage {
		out := make([]json.RawMessage, len(s))
		for i, v := range s {
			out[i] = json.RawMessage(v)
		}
		return out
	}
	for _, tc := range []struct {
		name               string
		execution          string
		status             string
		outcomes, receipts []json.RawMessage
	}{
		{"final", "FINAL", `{"SuccessValue":""}`, raw(`{"id":"A"}`, `{"id":"B","x":[1,2]}`), raw(`{"receipt_id":"A"}`, `{"receipt_id":"B"}`)},
		{"no receipts", "EXECUTED", `{"SuccessReceiptId":"A"}`, raw(`{"id":"A"}`), nil},
		{"started", "INCLUDED_FINAL", `"Started"`, nil, nil},
	} {
		tx, txOutcome := json.RawMessage(`{"hash":"T","actions":["CreateAccount"]}`), json.RawMessage(`{"id":"T","proof":[]}`)
		parts := []jsonobject.Member{
			{Key: "final_execution_status", Value: json.RawMessage(`"` + tc.execution + `"`)},
			{Key: "status", Value: json.RawMessage(tc.status)},
			{Key: "transaction", Value: tx},
			{Key: "transaction_outcome", Value: txOutcome},
			{Key: "receipts_outcome", Value: jsonobject.Array(tc.outcomes)},
		}
		if len(tc.receipts) > 0 {
			parts = append(parts, jsonobject.Member{Key: "receipts", Value: jsonobject.Array(tc.receipts)})
		}
		got := statusJSON(tc.execution, json.RawMessage(tc.status), tx, txOutcome, tc.outcomes, tc.receipts)
		if want := jsonobject.Object(parts); string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: not JSON: %s", tc.name, got)
		}
	}
}
