package sim

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
)

// TestRelayedAndYieldedTraffic: relayed transactions carry one Delegate
// action to the user; the relayer's receipt sets the user's key nonce and
// makes the nested receipt user → receiver signed by the relayer, or fails
// as nearcore does (expired). Yields are PromiseYield receipts listed by
// the outcome that made them but carried by no chunk; they run when a
// PromiseResume receipt (in a chunk) brings the payload, or once the yield
// timeout has passed, with a failed input (the contract logs "timeout").
func TestRelayedAndYieldedTraffic(t *testing.T) {
	t.Parallel()
	cfg := testConfig(300)
	cfg.YieldTimeout = 30
	n, _ := startNode(t, cfg)
	c := n.chain

	relayed, nested, expired := 0, 0, 0
	for _, tx := range c.txs {
		if len(tx.view.Actions) != 1 || tx.view.Actions[0].Delegate == nil {
			continue
		}
		relayed++
		da := tx.view.Actions[0].Delegate.DelegateAction
		require.Equal(t, da.SenderID, tx.view.ReceiverID, "sent to the user")
		require.NotEqual(t, da.SenderID, tx.view.SignerID, "signed by a relayer")
		r := c.receipts[tx.receiptID]
		if !r.executed {
			continue
		}
		var status map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(r.outcome.Outcome.Status, &status))
		if f, ok := status["Failure"]; ok {
			var fail struct {
				ActionError struct {
					Kind json.RawMessage `json:"kind"`
				}
			}
			require.NoError(t, json.Unmarshal(f, &fail))
			if string(fail.ActionError.Kind) == `"DelegateActionExpired"` {
				require.Less(t, da.MaxBlockHeight, r.height)
				expired++
				continue
			}
			// A later delegate of the same user that ran first took a
			// higher nonce.
			require.Contains(t, string(fail.ActionError.Kind), "DelegateActionInvalidNonce")
			continue
		}
		require.JSONEq(t, `{"SuccessValue":""}`, string(r.outcome.Outcome.Status))
		require.NotEmpty(t, r.outcome.Outcome.ReceiptIDs)
		inner := c.receipts[r.outcome.Outcome.ReceiptIDs[0]]
		require.Equal(t, da.SenderID, inner.view.PredecessorID)
		require.Equal(t, da.ReceiverID, inner.view.ReceiverID)
		require.Equal(t, tx.view.SignerID, inner.view.Receipt.Action.SignerID, "the relayer pays")
		require.Equal(t, da.Actions, inner.view.Receipt.Action.Actions)
		key := c.st.keyAt(da.SenderID, da.PublicKey, r.height)
		require.GreaterOrEqual(t, key.Nonce, da.Nonce, "the user's key took the delegate nonce")
		if _, carried := c.receiptChunks[inner.view.ReceiptID]; carried {
			nested++
		}
	}
	require.Positive(t, relayed)
	require.Positive(t, nested)
	require.Positive(t, expired)

	yields, resumed, timedOut, resumes := 0, 0, 0, 0
	for _, r := range c.receipts {
		a := r.view.Receipt.Action
		if a == nil || !a.IsPromiseYield {
			continue
		}
		yields++
		_, carried := c.receiptChunks[r.view.ReceiptID]
		require.False(t, carried, "a yield travels in no chunk")
		require.Len(t, a.InputDataIDs, 1)
		require.Equal(t, yieldAccount, r.view.ReceiverID)
		if !r.executed {
			continue
		}
		if len(r.outcome.Outcome.Logs) == 1 && r.outcome.Outcome.Logs[0] == "timeout" {
			timedOut++
		} else {
			require.Contains(t, string(r.outcome.Outcome.Status), "SuccessValue")
			require.NotEqual(t, `{"SuccessValue":""}`, string(r.outcome.Outcome.Status))
			resumed++
		}
	}
	for _, ch := range c.chunks {
		for _, r := range ch.view.Receipts {
			if d := r.Receipt.Data; d != nil && d.IsPromiseResume {
				resumes++
			}
		}
	}
	require.Positive(t, yields)
	require.Positive(t, resumed)
	require.Positive(t, timedOut)
	require.Positive(t, resumes)

	// A yielded transaction's status runs through the yield to its value.
	final := 0
	for hash, tx := range c.txs {
		if tx.view.ReceiverID != yieldAccount || tx.view.Actions[0].FunctionCall.MethodName != "request" {
			continue
		}
		raw, err := n.Tx(context.Background(), near.TxRequest{TxHash: hash, SenderAccountID: tx.view.SignerID}, true)
		require.NoError(t, err)
		var st near.FinalExecutionOutcomeView
		require.NoError(t, json.Unmarshal(raw, &st))
		if st.FinalExecutionStatus != "FINAL" {
			continue
		}
		final++
		found := false
		for _, r := range st.Receipts {
			found = found || (r.Receipt.Action != nil && r.Receipt.Action.IsPromiseYield)
		}
		require.True(t, found, "the status lists the yield receipt")
	}
	require.Positive(t, final)
	t.Logf("relayed %d (nested receipts carried %d, expired %d); yields %d (resumed %d, timed out %d), resume receipts %d, yielded transactions final %d",
		relayed, nested, expired, yields, resumed, timedOut, resumes, final)
}
