//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/verify/verifytest"
)

// yieldTimeout is the simulator's --yield-timeout in the differential
// chains: short enough that yields time out within them.
const yieldTimeout = "20"

// differentialChain starts the chain the differential tests of the binary
// compare, from seed with args added: 4 shards at protocol 77 (global
// contracts deployed, distributed and used), with relayed and yielded
// traffic whose yields both resume and time out (--yield-timeout
// yieldTimeout).
func differentialChain(t *testing.T, maxHeight uint64, seed string, args ...string) e2ekit.SimChain {
	t.Helper()
	return binary.Chain(t, maxHeight, append([]string{"--seed", seed, "--shards", "4", "--protocol-version", "77",
		"--yield-timeout", yieldTimeout}, args...)...)
}

// sampleHeights is how many heights the differential tests of the binary
// sample (e2ekit.SampleRequests); the in-process tests ask them all.
const sampleHeights = 12

// relayedAndYielded counts the meta-transaction and yield/resume traffic
// of a chain, from what its chunks carried and its statuses list.
type relayedAndYielded struct {
	relayed          int // transactions whose one action is Delegate
	delegateReceipts int // receipts relayer → user carrying a Delegate
	yieldRequests    int // transactions calling the contract that yields
	yields           int // PromiseYield receipts the statuses list (in no chunk)
	resumes          int // PromiseResume data receipts with a payload
	timeouts         int // PromiseResume data receipts without (timeouts)
	// executedYields are the ids of the yields that ran.
	executedYields []string
}

func countRelayedAndYielded(t *testing.T, sim *e2ekit.Client, shape e2ekit.ChainShape) relayedAndYielded {
	t.Helper()
	var n relayedAndYielded
	for h := shape.GenesisHeight; h <= shape.Head; h++ {
		for _, chunk := range e2ekit.NewChunks(t, sim, h) {
			for _, tx := range chunk.Transactions {
				if len(tx.Actions) == 1 && tx.Actions[0].Delegate != nil {
					n.relayed++
				}
				if tx.ReceiverID != "yield.near" || tx.Actions[0].FunctionCall == nil || tx.Actions[0].FunctionCall.MethodName != "request" {
					continue
				}
				n.yieldRequests++
				env, err := sim.Call("EXPERIMENTAL_tx_status", map[string]any{"tx_hash": tx.Hash, "sender_account_id": tx.SignerID})
				if err != nil || env.Result == nil {
					t.Fatalf("status of %s from sim: %v %s", tx.Hash, err, env.Error)
				}
				var st near.FinalExecutionOutcomeView
				if err := json.Unmarshal(env.Result, &st); err != nil {
					t.Fatalf("decode status of %s: %v", tx.Hash, err)
				}
				for _, r := range st.Receipts {
					if a := r.Receipt.Action; a != nil && a.IsPromiseYield {
						n.yields++
						n.executedYields = append(n.executedYields, r.ReceiptID)
					}
				}
			}
			for _, r := range chunk.Receipts {
				if a := r.Receipt.Action; a != nil && len(a.Actions) > 0 && a.Actions[0].Delegate != nil {
					n.delegateReceipts++
				}
				if d := r.Receipt.Data; d != nil && d.IsPromiseResume {
					if d.Data == nil {
						n.timeouts++
					} else {
						n.resumes++
					}
				}
			}
		}
	}
	return n
}

// require fails unless every kind of the traffic is in the chain.
func (n relayedAndYielded) require(t *testing.T) {
	t.Helper()
	t.Logf("relayed transactions %d, Delegate receipts %d, yield requests %d, yields %d, resumes %d, timeouts %d",
		n.relayed, n.delegateReceipts, n.yieldRequests, n.yields, n.resumes, n.timeouts)
	for name, v := range map[string]int{"relayed transactions": n.relayed, "Delegate receipts": n.delegateReceipts,
		"yield requests": n.yieldRequests, "yields": n.yields, "resumes": n.resumes, "yield timeouts": n.timeouts} {
		if v == 0 {
			t.Errorf("no %s in the chain", name)
		}
	}
}

// requireYieldOutcomesStored fails unless the archive at dbURL has an
// execution outcome for every yield that ran and no receipts row for any:
// no chunk carried them.
func requireYieldOutcomesStored(t *testing.T, dbURL string, ids []string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var outcomes, receipts int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(DISTINCT id) FROM execution_outcomes WHERE id = ANY($1)),
		(SELECT count(*) FROM receipts WHERE receipt_id = ANY($1))`, ids).Scan(&outcomes, &receipts); err != nil {
		t.Fatalf("count yield outcomes: %v", err)
	}
	if outcomes != len(ids) || receipts != 0 {
		t.Errorf("of %d yields that ran, the archive has %d outcomes (want all) and %d receipts rows (want none)", len(ids), outcomes, receipts)
	}
}

// requireProhibitedInView asks the simulator the view requests and fails
// unless each answer is nearcore's ProhibitedInView for the host function.
func requireProhibitedInView(t *testing.T, sim *e2ekit.Client, height uint64) {
	t.Helper()
	for i, r := range e2ekit.FromPlan(verifytest.YieldViews(height)) {
		env, err := sim.Call(r.Method, r.Params)
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		fn := []string{"promise_yield_create", "promise_yield_resume"}[i]
		if env.Error == nil || !strings.Contains(string(env.Error), fn+" is not allowed in view calls") {
			t.Errorf("%s: want ProhibitedInView for %s, got result %s error %s", r, fn, env.Result, env.Error)
		}
	}
}
