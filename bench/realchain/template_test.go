package realchain

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/fixture"
)

// view is what the tests read of a copy.
type view struct {
	Block struct {
		Header struct {
			Height           uint64 `json:"height"`
			PrevHeight       uint64 `json:"prev_height"`
			Hash             string `json:"hash"`
			PrevHash         string `json:"prev_hash"`
			Timestamp        uint64 `json:"timestamp"`
			TimestampNanosec string `json:"timestamp_nanosec"`
		} `json:"header"`
		Chunks []chunkHeader `json:"chunks"`
	} `json:"block"`
	Shards []struct {
		Chunk *struct {
			Header       chunkHeader `json:"header"`
			Transactions []struct {
				Transaction struct {
					Hash string `json:"hash"`
				} `json:"transaction"`
				Outcome struct {
					ExecutionOutcome outcomeView `json:"execution_outcome"`
				} `json:"outcome"`
			} `json:"transactions"`
			Receipts []struct {
				ReceiptID string `json:"receipt_id"`
			} `json:"receipts"`
		} `json:"chunk"`
		ReceiptExecutionOutcomes []struct {
			ExecutionOutcome outcomeView `json:"execution_outcome"`
			Receipt          struct {
				ReceiptID string `json:"receipt_id"`
			} `json:"receipt"`
			TxHash *string `json:"tx_hash"`
		} `json:"receipt_execution_outcomes"`
	} `json:"shards"`
}

type chunkHeader struct {
	ChunkHash      string `json:"chunk_hash"`
	PrevBlockHash  string `json:"prev_block_hash"`
	HeightCreated  uint64 `json:"height_created"`
	HeightIncluded uint64 `json:"height_included"`
}

type outcomeView struct {
	ID        string `json:"id"`
	BlockHash string `json:"block_hash"`
	Outcome   struct {
		ReceiptIDs []string `json:"receipt_ids"`
	} `json:"outcome"`
}

// normalized is a document with every id and every shifted height or time
// replaced by a placeholder: two copies of a template are the same
// normalized, byte for byte.
func normalized(t *testing.T, doc []byte) string {
	t.Helper()
	out, err := rewrite(doc, func(path []string, tok []byte) []byte {
		if idPosition(path) != idNone && tok[0] == '"' {
			return []byte(`"ID"`)
		}
		if heightPosition(path) != shiftNone {
			return []byte(`"N"`)
		}
		return nil
	})
	require.NoError(t, err)
	return string(out)
}

// chainOf renders copies 0..n-1 and decodes them.
func chainOf(t *testing.T, tpl *Template, n int) ([][]byte, []view) {
	t.Helper()
	docs := make([][]byte, n)
	views := make([]view, n)
	for k := range n {
		var err error
		docs[k], err = tpl.Copy(k)
		require.NoError(t, err)
		require.True(t, json.Valid(docs[k]), "copy %d", k)
		require.NoError(t, json.Unmarshal(docs[k], &views[k]))
	}
	return docs, views
}

// TestCopiesLinkAndKeepTheDocument builds chains from every recorded block
// document and requires: copy 0 is the document byte for byte; copy k is at
// height H+k, its prev_hash and prev_height copy k-1's, its chunks' heights
// and prev_block_hash following, its timestamp one block time later; and,
// once every id and shifted number is set aside, each copy is the document
// byte for byte.
func TestCopiesLinkAndKeepTheDocument(t *testing.T) {
	t.Parallel()
	for _, file := range fixture.Glob(t, "real/neardata/*.json") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			doc := fixture.Read(t, "real/neardata/"+filepath.Base(file))
			tpl, err := New(doc)
			require.NoError(t, err)
			docs, views := chainOf(t, tpl, 4)
			require.Equal(t, doc, docs[0], "copy 0 is the document")
			want := normalized(t, doc)
			for k, v := range views {
				h := v.Block.Header
				require.Equal(t, tpl.Height()+uint64(k), h.Height)
				require.Equal(t, strconv.FormatUint(h.Timestamp, 10), h.TimestampNanosec)
				require.Equal(t, views[0].Block.Header.Timestamp+uint64(k)*DefaultBlockTime, h.Timestamp)
				for i, c := range v.Block.Chunks {
					require.Equal(t, views[0].Block.Chunks[i].HeightCreated+uint64(k), c.HeightCreated)
					require.Equal(t, h.Height, c.HeightIncluded)
					if c.HeightCreated == h.Height {
						require.Equal(t, h.PrevHash, c.PrevBlockHash, "chunk %d of copy %d", i, k)
					}
				}
				for _, sh := range v.Shards {
					if sh.Chunk != nil && sh.Chunk.Header.HeightCreated == h.Height {
						require.Equal(t, h.PrevHash, sh.Chunk.Header.PrevBlockHash)
					}
				}
				if k > 0 {
					require.Equal(t, h.Height-1, h.PrevHeight)
					require.Equal(t, views[k-1].Block.Header.Hash, h.PrevHash, "copy %d links to copy %d", k, k-1)
					require.Equal(t, want, normalized(t, docs[k]), "copy %d is the document but for ids, heights and times", k)
				}
			}
		})
	}
}

// keys are the ids of one copy that are keys in the archive.
func keys(v view) (blocks, chunks, txs, executed []string, created map[string]bool) {
	created = map[string]bool{}
	blocks = []string{v.Block.Header.Hash}
	for _, c := range v.Block.Chunks {
		chunks = append(chunks, c.ChunkHash)
	}
	for _, sh := range v.Shards {
		if sh.Chunk != nil {
			for _, tx := range sh.Chunk.Transactions {
				txs = append(txs, tx.Transaction.Hash)
				for _, id := range tx.Outcome.ExecutionOutcome.Outcome.ReceiptIDs {
					created[id] = true
				}
			}
		}
		for _, o := range sh.ReceiptExecutionOutcomes {
			executed = append(executed, o.Receipt.ReceiptID)
			for _, id := range o.ExecutionOutcome.Outcome.ReceiptIDs {
				created[id] = true
			}
		}
	}
	for _, id := range executed {
		delete(created, id) // runs in its own block
	}
	return blocks, chunks, txs, executed, created
}

// TestNoKeyCollidesAndReceiptsRunInTheNextCopies requires, on a chain of
// the mainnet document: no block, chunk, transaction or executed receipt
// id in two copies; the receipts a copy executes that the previous copy
// created as many as Stats says, at least 70% of what it creates (the
// block creates 377 receipts and executes 313, so at most 83% could) and
// with the chunks' incoming receipts at least 85%; at least 85% of the
// executed receipts in a transaction of the chain; and, following
// receipts across copies as the document source does, every transaction's
// receipts executing (a FINAL status), within 6 copies.
func TestNoKeyCollidesAndReceiptsRunInTheNextCopies(t *testing.T) {
	t.Parallel()
	tpl, err := New(fixture.Read(t, "real/neardata/mainnet-151768255.json"))
	require.NoError(t, err)
	st := tpl.Stats()
	t.Logf("%+v", st)
	n := st.MaxDepth + 4
	_, views := chainOf(t, tpl, n)

	seen := map[string]int{}
	for k, v := range views {
		blocks, chunks, txs, executed, _ := keys(v)
		for _, set := range [][]string{blocks, chunks, txs, executed} {
			for _, id := range set {
				prev, dup := seen[id]
				require.False(t, dup, "%s of copy %d is also in copy %d", id, k, prev)
				seen[id] = k
			}
		}
	}
	paired := 0
	for k := 1; k < n; k++ {
		_, _, _, executed, _ := keys(views[k])
		_, _, _, _, created := keys(views[k-1])
		got := 0
		for _, id := range executed {
			if created[id] {
				got++
			}
		}
		require.Equal(t, st.Paired, got, "copy %d executes what copy %d created", k, k-1)
		paired = got
	}
	require.Equal(t, st.Created, len(func() map[string]bool { _, _, _, _, c := keys(views[1]); return c }()))
	rate := float64(paired) / float64(st.Created)
	t.Logf("created receipts executed in the next copy: %d of %d (%.1f%%), %d more incoming; by account %d; executed receipts in a transaction: %d of %d",
		paired, st.Created, 100*rate, st.PairedIncoming, st.ByAccount, st.InTransactions, st.Executed)
	require.GreaterOrEqual(t, rate, 0.70)
	require.GreaterOrEqual(t, float64(paired+st.PairedIncoming)/float64(st.Created), 0.85)
	require.GreaterOrEqual(t, float64(st.InTransactions)/float64(st.Executed), 0.85)
	require.LessOrEqual(t, st.MaxDepth, 6)

	// Follow every transaction of copy 1 through the copies after it.
	outcomes := map[string][]string{}
	for _, v := range views {
		for _, sh := range v.Shards {
			for _, o := range sh.ReceiptExecutionOutcomes {
				outcomes[o.ExecutionOutcome.ID] = o.ExecutionOutcome.Outcome.ReceiptIDs
			}
		}
	}
	complete, total := 0, 0
	for _, sh := range views[1].Shards {
		if sh.Chunk == nil {
			continue
		}
		for _, tx := range sh.Chunk.Transactions {
			total++
			stack, done := append([]string(nil), tx.Outcome.ExecutionOutcome.Outcome.ReceiptIDs...), true
			for len(stack) > 0 && done {
				id := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				children, ok := outcomes[id]
				done = ok
				stack = append(stack, children...)
			}
			if done {
				complete++
			}
		}
	}
	t.Logf("transactions whose receipts all execute: %d of %d", complete, total)
	require.Equal(t, st.Complete, complete)
	require.Equal(t, total, complete)
}
