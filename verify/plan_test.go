package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/upstream"
)

// simulated starts a simulated chain up to height 40 (protocol 77: global
// contracts too), and returns it as both an Archive (its backend behind
// the protocol layer, as serve's) and a Node over HTTP.
func simulated(t *testing.T, tamper func(method string, body []byte) []byte) (*Archive, *Node) {
	t.Helper()
	// A chain whose 80 heights hold every kind the plans ask about, global
	// contracts deployed by hash and used included (seed 3's no longer does
	// since the token-event traffic changed the mix; 4 to 7 all do).
	node := simtest.New(t, sim.Config{Seed: 4, Shards: 3, TxsPerBlock: 12, SkipRate: 0.1, MissingChunkRate: 0.1, ProtocolVersion: 77, MaxHeight: 80}).Node

	archive, err := NewArchive(node, rpcserve.Config{}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, archive.Close(context.Background())) })

	h := node.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
		out := rec.Body.Bytes()
		if tamper != nil {
			var req struct{ Method string }
			_ = jsonUnmarshal(body, &req)
			out = tamper(req.Method, out)
		}
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	remote, err := NewNode(upstream.Config{Endpoints: []string{srv.URL}})
	require.NoError(t, err)
	return archive, remote
}

// TestPlanAsksEveryMethod plans over a simulated chain and runs the plan
// against the same chain: every answer is identical, and every kind of
// request the plan promises is asked and answered with data.
func TestPlanAsksEveryMethod(t *testing.T) {
	t.Parallel()
	archive, node := simulated(t, nil)
	ctx := context.Background()
	plan, err := NewPlan(ctx, archive, PlanConfig{Sample: 16, Seed: 10}, nil)
	require.NoError(t, err)
	require.Equal(t, uint64(0), plan.From)
	require.Equal(t, uint64(80), plan.To)
	require.Len(t, plan.Heights, 16)

	again, err := NewPlan(ctx, archive, PlanConfig{Sample: 16, Seed: 10}, nil)
	require.NoError(t, err)
	require.Equal(t, plan.Requests, again.Requests, "the same seed asks the same requests")

	report, err := Run(ctx, archive, node, plan.Requests, RunConfig{Concurrency: 3}, nil)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, report.Write(&out))
	t.Logf("%d requests\n%s", len(plan.Requests), out.String())
	require.Zero(t, report.Different())
	results := map[string]int{}
	for _, k := range report.Kinds {
		results[k.Kind] = k.Identical - k.Errors
	}
	for _, kind := range []string{"block", "block_effects", "EXPERIMENTAL_changes_in_block", "chunk", "EXPERIMENTAL_congestion_level",
		"gas_price", "EXPERIMENTAL_protocol_config", "genesis_config", "EXPERIMENTAL_genesis_config",
		"tx", "EXPERIMENTAL_tx_status", "EXPERIMENTAL_receipt", "EXPERIMENTAL_receipt_to_tx",
		"changes/account_changes", "EXPERIMENTAL_changes/account_changes", "EXPERIMENTAL_changes/all_access_key_changes",
		"changes/contract_code_changes", "EXPERIMENTAL_changes/data_changes", "changes/single_access_key_changes",
		"query/view_account", "query/view_code", "query/view_state", "query/view_access_key", "query/view_access_key_list",
		"query/call_function", "query/view_global_contract_code_by_account_id", "query/view_global_contract_code"} {
		require.Positive(t, results[kind], "no %s answered with data", kind)
	}
}

// TestPlanNamesTheMethodThatDiffers runs a plan against a node whose
// gas_price answers were altered: gas_price differs, nothing else.
func TestPlanNamesTheMethodThatDiffers(t *testing.T) {
	t.Parallel()
	archive, node := simulated(t, func(method string, body []byte) []byte {
		if method != "gas_price" {
			return body
		}
		return []byte(strings.Replace(string(body), `"gas_price":"`, `"gas_price":"9`, 1))
	})
	ctx := context.Background()
	from, to := uint64(10), uint64(20)
	plan, err := NewPlan(ctx, archive, PlanConfig{From: &from, To: &to, Sample: 4, Seed: 1}, nil)
	require.NoError(t, err)
	report, err := Run(ctx, archive, node, plan.Requests, RunConfig{}, nil)
	require.NoError(t, err)
	for _, k := range report.Kinds {
		if k.Kind == "gas_price" {
			require.Equal(t, k.Requests-k.Errors, k.Different, "every gas price the node answered differs")
			require.Positive(t, k.Different)
		} else {
			require.Zero(t, k.Different, k.Kind)
		}
	}
	require.NotEmpty(t, report.Differences)
	d := report.Differences[0]
	require.Equal(t, "gas_price", d.Request.Kind)
	require.Equal(t, "result.gas_price", d.Difference.Path)
	require.Equal(t, `"9`+strings.Trim(d.Difference.Archive, `"`)+`"`, d.Difference.Node)

	for _, bad := range [][2]uint64{{30, 20}, {10, 81}} {
		_, err := NewPlan(ctx, archive, PlanConfig{From: &bad[0], To: &bad[1]}, nil)
		require.ErrorIs(t, err, ErrRange, "%v", bad)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestPlanStopsOnTheArchivesOwnFailure: an archive that answers
// INTERNAL_ERROR while the plan is drawn (its database away) fails the
// plan instead of thinning it.
func TestPlanStopsOnTheArchivesOwnFailure(t *testing.T) {
	t.Parallel()
	archive := targetFunc(func(r targetRequest) (string, error) {
		if r.Method == "status" {
			return `{"result":{"sync_info":{"earliest_block_height":1,"latest_block_height":9}}}`, nil
		}
		return `{"error":{"name":"INTERNAL_ERROR","cause":{"name":"INTERNAL_ERROR","info":{}}}}`, nil
	})
	_, err := NewPlan(context.Background(), archive, PlanConfig{Sample: 3}, nil)
	require.ErrorContains(t, err, "ask archive block: it answered INTERNAL_ERROR")

	empty := targetFunc(func(targetRequest) (string, error) {
		return `{"error":{"name":"HANDLER_ERROR","cause":{"name":"NOT_SYNCED_YET","info":{}}}}`, nil
	})
	_, err = NewPlan(context.Background(), empty, PlanConfig{}, nil)
	require.ErrorIs(t, err, ErrRange, "an archive without blocks has no range to sample")
}

// TestArchiveMarksWhatItWouldForward: a request the handler would send
// upstream comes back as the forwarded marker, not as an answer.
func TestArchiveMarksWhatItWouldForward(t *testing.T) {
	t.Parallel()
	archive, _ := simulated(t, nil)
	ctx := context.Background()
	out, err := archive.Answer(ctx, NewRequest("send_tx", map[string]any{"signed_tx_base64": "AA=="}).Body())
	require.NoError(t, err)
	require.True(t, IsForwarded(out), "%s", out)
	out, err = archive.Answer(ctx, NewRequest("block", map[string]any{"block_id": 1}).Body())
	require.NoError(t, err)
	require.False(t, IsForwarded(out))
	_, err = ParseAnswer(out)
	require.NoError(t, err)
}
