package verify

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPlanOptions: without Edges nothing asks for a finality or past the
// range; with it the finality forms, the two heights past the head and
// malformed requests are asked. AllAccountsEvery asks every account of
// the pool at the first sampled height, and Calls replace the calls
// guessed from a contract's exports.
func TestPlanOptions(t *testing.T) {
	t.Parallel()
	archive, _ := simulated(t, nil)
	ctx := context.Background()
	from, to := uint64(10), uint64(30)
	base := PlanConfig{From: &from, To: &to, Sample: 5, Seed: 3}
	plain, err := NewPlan(ctx, archive, base, nil)
	require.NoError(t, err)
	for _, r := range plain.Requests {
		var p struct {
			Finality string `json:"finality"`
			BlockID  any    `json:"block_id"`
		}
		_ = json.Unmarshal(r.Params, &p)
		require.Empty(t, p.Finality, "%s", r)
		if h, ok := p.BlockID.(float64); ok {
			require.LessOrEqual(t, h, float64(to), "%s", r)
		}
	}

	var status struct {
		CodeHash string `json:"code_hash"`
	}
	p := planner{archive: archive, cfg: base.withDefaults(), exports: map[string][]string{}}
	ok, err := p.ask(ctx, "query", map[string]any{"request_type": "view_account", "account_id": "status.near", "block_id": to}, &status)
	require.NoError(t, err)
	require.True(t, ok)
	cfg := base
	cfg.Edges, cfg.AllAccountsEvery = true, 2
	cfg.Calls = map[string][]Call{status.CodeHash: {{Method: "get_status", Args: []byte(`{"account_id":"known.near"}`)}}}
	plan, err := NewPlan(ctx, archive, cfg, nil)
	require.NoError(t, err)

	has := func(method, params string) bool {
		return slices.ContainsFunc(plan.Requests, func(r Request) bool { return r.Method == method && string(r.Params) == params })
	}
	for _, want := range [][2]string{{"block", `{"finality":"final"}`}, {"block", `{"finality":"optimistic"}`},
		{"block", `{"block_id":31}`}, {"block", `{"block_id":32}`}, {"EXPERIMENTAL_nothing", `{}`}, {"health", `null`}} {
		require.True(t, has(want[0], want[1]), "no %s %s", want[0], want[1])
	}

	asked := map[uint64][]string{} // height → accounts asked view_account
	var pool []string
	var statusCalls []string
	for _, r := range plan.Requests {
		var q struct {
			RequestType string `json:"request_type"`
			AccountID   string `json:"account_id"`
			BlockID     uint64 `json:"block_id"`
			MethodName  string `json:"method_name"`
			Args        string `json:"args_base64"`
		}
		if r.Method != "query" || json.Unmarshal(r.Params, &q) != nil {
			continue
		}
		switch {
		case q.RequestType == "view_account" && q.BlockID >= from && q.BlockID <= to:
			asked[q.BlockID] = append(asked[q.BlockID], q.AccountID)
			if !slices.Contains(pool, q.AccountID) {
				pool = append(pool, q.AccountID)
			}
		case q.RequestType == "call_function" && q.AccountID == "status.near":
			args, err := base64.StdEncoding.DecodeString(q.Args)
			require.NoError(t, err)
			statusCalls = append(statusCalls, q.MethodName+" "+string(args))
		}
	}
	first := plan.Heights[0]
	for _, a := range pool {
		require.Contains(t, asked[first], a, "account %s not asked at the first height %d", a, first)
	}
	known := `get_status {"account_id":"known.near"}`
	require.Contains(t, statusCalls, known)
	for _, c := range statusCalls {
		require.True(t, c == known || !strings.HasPrefix(c, "get_status "), "%s: a guessed call, though Calls knows the code", c)
	}
}
