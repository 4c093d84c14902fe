package e2ekit

import (
	"encoding/json"
	"testing"

	"github.com/nearline/nearline/verify"
)

// Request is one JSON-RPC call, sent to two nodes to compare their answers.
type Request struct {
	Method string
	Params any
}

func (r Request) String() string {
	p, _ := json.Marshal(r.Params)
	return r.Method + " " + string(p)
}

// Outcome counts answers of one kind of request, and those that differed.
type Outcome struct{ Results, Errors, Mismatches int }

// Compare sends every request to both nodes, want first, and reports each
// difference in result or error (as JSON documents: member order aside),
// naming each node by its URL. It returns, per kind of request (the method,
// and a query's request_type or a changes method's changes_type, as
// verify.Request.Kind names it), how many answers were results and how
// many errors.
func Compare(t testing.TB, want, got *Client, reqs []Request) map[string]*Outcome {
	t.Helper()
	return CompareWith(t, want, got, reqs, func(a, b json.RawMessage) bool {
		return Canonical(a) == Canonical(b)
	})
}

// CompareWith is Compare with same deciding whether two results (or two
// errors) are equal.
func CompareWith(t testing.TB, want, got *Client, reqs []Request, same func(a, b json.RawMessage) bool) map[string]*Outcome {
	t.Helper()
	tally := map[string]*Outcome{}
	mismatches := 0
	for _, r := range reqs {
		w, err := want.Call(r.Method, r.Params)
		if err != nil {
			t.Fatalf("%s %s: %v", want.URL, r, err)
		}
		g, err := got.Call(r.Method, r.Params)
		if err != nil {
			t.Fatalf("%s %s: %v", got.URL, r, err)
		}
		kind := verify.NewRequest(r.Method, r.Params).Kind
		if tally[kind] == nil {
			tally[kind] = &Outcome{}
		}
		if w.Result != nil {
			tally[kind].Results++
		} else {
			tally[kind].Errors++
		}
		if same(w.Result, g.Result) && same(w.Error, g.Error) {
			continue
		}
		mismatches++
		tally[kind].Mismatches++
		if mismatches <= 15 {
			t.Errorf("%s:\n %s: result=%.600s error=%.600s\n %s: result=%.600s error=%.600s",
				r, want.URL, w.Result, w.Error, got.URL, g.Result, g.Error)
		}
	}
	if mismatches > 15 {
		t.Errorf("... %d mismatches in all", mismatches)
	}
	return tally
}

// Total is the number of requests compared.
func Total(tally map[string]*Outcome) int {
	n := 0
	for _, o := range tally {
		n += o.Results + o.Errors
	}
	return n
}

// RequireResults fails unless each named kind got at least one result, so
// a comparison of nothing but errors cannot pass.
func RequireResults(t testing.TB, tally map[string]*Outcome, kinds ...string) {
	t.Helper()
	for _, k := range kinds {
		if o := tally[k]; o == nil || o.Results == 0 {
			t.Errorf("no successful %s among the compared requests", k)
		}
	}
}
