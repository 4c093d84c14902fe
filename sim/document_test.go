package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
)

// testDocument is a block document as nearcore's StreamerMessage.
type testDocument struct {
	Block  json.RawMessage `json:"block"`
	Shards []struct {
		ShardID uint64 `json:"shard_id"`
		Chunk   *struct {
			Author       string               `json:"author"`
			Header       near.ChunkHeaderView `json:"header"`
			Transactions []struct {
				Transaction json.RawMessage `json:"transaction"`
				Outcome     struct {
					ExecutionOutcome json.RawMessage `json:"execution_outcome"`
					Receipt          json.RawMessage `json:"receipt"`
				} `json:"outcome"`
			} `json:"transactions"`
			Receipts json.RawMessage `json:"receipts"`
		} `json:"chunk"`
		ReceiptExecutionOutcomes []struct {
			ExecutionOutcome near.ExecutionOutcomeWithIDView `json:"execution_outcome"`
			Receipt          near.ReceiptView                `json:"receipt"`
			TxHash           *string                         `json:"tx_hash"`
		} `json:"receipt_execution_outcomes"`
		StateChanges []json.RawMessage `json:"state_changes"`
	} `json:"shards"`
}

// TestBlockDocumentsHoldWhatJSONRPCServes checks each height's neardata
// document against the node's own JSON-RPC answers: the block as served,
// each new chunk's header, transactions and receipts, each transaction's
// outcome as EXPERIMENTAL_tx_status has it, the receipts executed at this
// height with their outcomes, and the state changes EXPERIMENTAL_changes
// lists. Skipped heights are null; NEAR Lake's objects hold the same parts.
func TestBlockDocumentsHoldWhatJSONRPCServes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, srv := startNode(t, testConfig(60))
	var skipped, txs, outcomes, changes int
	for h := uint64(0); h <= 60; h++ {
		status, _, body := httpGet(t, fmt.Sprintf("%s/v0/block/%d", srv.URL, h))
		require.Equal(t, http.StatusOK, status)
		lakeStatus, _, lakeBlock := httpGet(t, fmt.Sprintf("%s/lake/%012d/block.json", srv.URL, h))
		block, err := n.Block(ctx, near.BlockReference{BlockID: ptr(near.HeightID(h))})
		if err != nil {
			require.True(t, near.IsUnknownBlock(err))
			require.Equal(t, "null", string(body), "skipped height %d", h)
			require.Equal(t, http.StatusNotFound, lakeStatus)
			skipped++
			continue
		}
		require.Equal(t, http.StatusOK, lakeStatus)
		require.Equal(t, string(block), string(lakeBlock))
		var doc testDocument
		require.NoError(t, json.Unmarshal(body, &doc))
		require.Equal(t, string(block), string(doc.Block))
		var view near.BlockView
		require.NoError(t, json.Unmarshal(block, &view))
		require.Len(t, doc.Shards, len(view.Chunks))
		var docChanges []string
		for s, sh := range doc.Shards {
			require.Equal(t, uint64(s), sh.ShardID)
			_, _, lakeShard := httpGet(t, fmt.Sprintf("%s/lake/%012d/shard_%d.json", srv.URL, h, s))
			var whole struct {
				Shards []json.RawMessage `json:"shards"`
			}
			require.NoError(t, json.Unmarshal(body, &whole))
			require.JSONEq(t, string(whole.Shards[s]), string(lakeShard))
			if !view.Header.ChunkMask[s] {
				require.Nil(t, sh.Chunk, "missing chunk of shard %d at %d", s, h)
			} else {
				require.NotNil(t, sh.Chunk)
				raw, err := n.Chunk(ctx, near.ChunkRequest{ChunkID: view.Chunks[s].ChunkHash})
				require.NoError(t, err)
				var chunk struct {
					Transactions []json.RawMessage `json:"transactions"`
					Receipts     json.RawMessage   `json:"receipts"`
				}
				require.NoError(t, json.Unmarshal(raw, &chunk))
				require.Equal(t, view.Chunks[s], sh.Chunk.Header)
				require.JSONEq(t, string(chunk.Receipts), string(sh.Chunk.Receipts))
				require.Len(t, sh.Chunk.Transactions, len(chunk.Transactions))
				for i, tx := range sh.Chunk.Transactions {
					require.Equal(t, string(chunk.Transactions[i]), string(tx.Transaction))
					require.Equal(t, "null", string(tx.Outcome.Receipt))
					var id struct {
						Hash     string `json:"hash"`
						SignerID string `json:"signer_id"`
					}
					require.NoError(t, json.Unmarshal(tx.Transaction, &id))
					st, err := n.Tx(ctx, near.TxRequest{TxHash: id.Hash, SenderAccountID: id.SignerID}, true)
					require.NoError(t, err)
					var status struct {
						TransactionOutcome json.RawMessage `json:"transaction_outcome"`
					}
					require.NoError(t, json.Unmarshal(st, &status))
					require.Equal(t, string(status.TransactionOutcome), string(tx.Outcome.ExecutionOutcome))
					txs++
				}
			}
			for _, ro := range sh.ReceiptExecutionOutcomes {
				require.Equal(t, view.Header.Hash, ro.ExecutionOutcome.BlockHash)
				require.Equal(t, ro.Receipt.ReceiptID, ro.ExecutionOutcome.ID)
				require.Equal(t, s, n.chain.shardOf(ro.Receipt.ReceiverID), "executed in the receiver's shard")
				if ro.TxHash != nil {
					rec := n.chain.txs[*ro.TxHash]
					require.NotNil(t, rec, "tx_hash names a transaction")
				}
				outcomes++
			}
			for _, c := range sh.StateChanges {
				var sc near.StateChangeWithCauseView
				require.NoError(t, json.Unmarshal(c, &sc))
				require.Equal(t, s, n.chain.shardOf(sc.Change.AccountID))
				docChanges = append(docChanges, string(c))
			}
		}
		// The same changes as EXPERIMENTAL_changes lists for the accounts
		// the block effects name.
		var want []string
		for _, ch := range n.chain.byHeight[h].changes {
			b, err := json.Marshal(ch.view)
			require.NoError(t, err)
			want = append(want, string(b))
		}
		slices.Sort(want)
		slices.Sort(docChanges)
		require.Equal(t, want, docChanges, "state changes of %d", h)
		changes += len(docChanges)
	}
	t.Logf("%d heights: %d skipped, %d transactions, %d receipt outcomes, %d state changes", 61, skipped, txs, outcomes, changes)
	require.Positive(t, skipped)
	require.Positive(t, txs)
	require.Positive(t, outcomes)
}

func ptr[T any](v T) *T { return &v }

// TestNeardataWaitsForTheHeadAsNeardataDoes: the final head redirects to
// its block; a height a little past it waits for the block; one more than
// ten past it is BLOCK_DOES_NOT_EXIST; lake has no object past the head.
func TestNeardataWaitsForTheHeadAsNeardataDoes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(80)
	cfg.SkipRate = 0
	cfg.Runtime = sharedRuntime()
	n := newNode(t, cfg)
	require.NoError(t, n.ProduceTo(ctx, 20))
	url := startServer(t, n)

	status, hdr, _ := httpGet(t, url+"/v0/last_block/final")
	require.Equal(t, http.StatusFound, status)
	require.Equal(t, "/v0/block/20", hdr.Get("Location"))

	status, _, body := httpGet(t, url+"/v0/block/31")
	require.Equal(t, http.StatusNotFound, status)
	require.JSONEq(t, `{"error":"The block is too far in the future","type":"BLOCK_DOES_NOT_EXIST"}`, string(body))
	status, _, _ = httpGet(t, fmt.Sprintf("%s/lake/%012d/block.json", url, 21))
	require.Equal(t, http.StatusNotFound, status)
	status, _, body = httpGet(t, url+"/v0/block/x")
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, `"Invalid argument"`, string(body))

	got := make(chan []byte, 1)
	go func() {
		_, _, body := httpGet(t, url+"/v0/block/25")
		got <- body
	}()
	select {
	case <-got:
		t.Fatal("a height past the head answered before its block existed")
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, n.ProduceTo(ctx, 25))
	select {
	case body := <-got:
		var doc testDocument
		require.NoError(t, json.Unmarshal(body, &doc))
		want, err := n.Block(ctx, near.BlockReference{BlockID: ptr(near.HeightID(25))})
		require.NoError(t, err)
		require.Equal(t, string(want), string(doc.Block))
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting request did not answer once the block existed")
	}
}
