package archive_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/verify"
	"github.com/nearline/nearline/verify/verifytest"
)

// TestArchiveMatchesSimulatorAtProtocol86 compares the archive with the
// simulator's protocol-86 chain: mainnet's ten shard ids (10, 11, 1, 8, 9,
// 6, 7, 4, 12, 13) reached by four splits into new ids, receipt outcomes
// with metadata version 4, yields processed as instant receipts. Every
// height's plan and, for each instant receipt whose transaction is final,
// EXPERIMENTAL_receipt and EXPERIMENTAL_receipt_to_tx must be
// byte-identical: an instant receipt is in no chunk, and the archive
// answers it from the stored status that lists its outcome.
func TestArchiveMatchesSimulatorAtProtocol86(t *testing.T) {
	t.Parallel()
	cfg := sim.Protocol86Config(7, 160)
	cfg.YieldTimeout = 10 // more yields end, by a timeout, before the head
	var more extra
	for _, id := range finalInstantReceipts(t, cfg) {
		for _, method := range []string{"EXPERIMENTAL_receipt", "EXPERIMENTAL_receipt_to_tx"} {
			r := verify.NewRequest(method, map[string]string{"receipt_id": id})
			r.Kind = "instant " + method
			more.requests = append(more.requests, r)
		}
	}
	more.carrying = []string{`"is_promise_yield":true`, `"version":4`}
	outcomes, _ := compareWithSimulator(t, cfg, more)
	requireOutcomes(t, outcomes, append(verifytest.AnsweredKinds(), "instant EXPERIMENTAL_receipt", "instant EXPERIMENTAL_receipt_to_tx"),
		`carrying "is_promise_yield":true`, `carrying "version":4`)
	t.Logf("%d instant receipts asked", outcomes["instant EXPERIMENTAL_receipt ok"])
}

// finalInstantReceipts produces cfg's chain on a node of its own and
// returns the instant receipts its documents list whose transaction's
// status is FINAL at the chain's head.
func finalInstantReceipts(t *testing.T, cfg sim.Config) []string {
	t.Helper()
	ctx := context.Background()
	node, err := sim.New(ctx, cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = node.Close(context.Background()) })
	require.NoError(t, node.ProduceTo(ctx, cfg.MaxHeight))
	srv := httptest.NewServer(node.Handler())
	t.Cleanup(srv.Close)
	var out []string
	for h := uint64(0); h <= cfg.MaxHeight; h++ {
		var doc struct {
			Shards []struct {
				Chunk *struct {
					Instant []near.ReceiptView `json:"instant_receipts"`
				} `json:"chunk"`
			} `json:"shards"`
		}
		simtest.Document(t, srv.URL, h, &doc)
		for _, sh := range doc.Shards {
			if sh.Chunk == nil {
				continue
			}
			for _, r := range sh.Chunk.Instant {
				tx, err := node.ReceiptToTx(ctx, r.ReceiptID)
				require.NoError(t, err, r.ReceiptID)
				raw, err := node.Tx(ctx, near.TxRequest{TxHash: tx.TransactionHash, SenderAccountID: tx.SenderAccountID}, true)
				require.NoError(t, err)
				var st struct {
					Final string `json:"final_execution_status"`
				}
				require.NoError(t, json.Unmarshal(raw, &st))
				if st.Final == "FINAL" {
					out = append(out, r.ReceiptID)
				}
			}
		}
	}
	require.NotEmpty(t, out, "no instant receipt of a final transaction")
	return out
}
