package docsource_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/docsource/neardatatest"
	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/store/storetest"
	"github.com/nearline/nearline/upstream"
)

// recordedDocument is a recorded block document decoded loosely, its
// block as B and each shard's chunk as C.
type recordedDocument[B, C any] struct {
	Block  B `json:"block"`
	Shards []struct {
		ShardID uint64 `json:"shard_id"`
		Chunk   C      `json:"chunk"`
		Outcome []struct {
			ExecutionOutcome json.RawMessage `json:"execution_outcome"`
			Receipt          json.RawMessage `json:"receipt"`
		} `json:"receipt_execution_outcomes"`
		StateChanges []json.RawMessage `json:"state_changes"`
	} `json:"shards"`
}

// testnetDocument is a block document recorded on testnet: its file's name
// and its body.
type testnetDocument struct {
	name string
	body []byte
}

// testnetDocuments reads the three block documents recorded on testnet.
func testnetDocuments(t *testing.T) []testnetDocument {
	t.Helper()
	files := fixture.Glob(t, "real/neardata/testnet-*.json")
	require.Len(t, files, 3)
	docs := make([]testnetDocument, len(files))
	for i, file := range files {
		body, err := os.ReadFile(file)
		require.NoError(t, err)
		docs[i] = testnetDocument{name: filepath.Base(file), body: body}
	}
	return docs
}

// replayWaits are the tx waits of the sources over a recorded document:
// short, its transactions being all the chain there is.
var replayWaits = upstream.Waits{TxStallWait: 20 * time.Millisecond, TxPollInterval: 5 * time.Millisecond}

func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, raw))
	return b.String()
}

// splitLake writes a document as NEAR Lake's block.json and shard_N.json.
func splitLake(t *testing.T, height uint64, body []byte) string {
	t.Helper()
	var doc struct {
		Block  json.RawMessage   `json:"block"`
		Shards []json.RawMessage `json:"shards"`
	}
	require.NoError(t, json.Unmarshal(body, &doc))
	dir := t.TempDir()
	folder := filepath.Join(dir, fmt.Sprintf("%012d", height))
	require.NoError(t, os.MkdirAll(folder, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(folder, "block.json"), doc.Block, 0o644))
	for _, sh := range doc.Shards {
		var id struct {
			ShardID uint64 `json:"shard_id"`
		}
		require.NoError(t, json.Unmarshal(sh, &id))
		require.NoError(t, os.WriteFile(filepath.Join(folder, fmt.Sprintf("shard_%d.json", id.ShardID)), sh, 0o644))
	}
	return dir
}

// TestRealDocumentsBecomeBundlesWithoutLoss builds Bundles from the block
// documents recorded on testnet (protocols 76-82, 8 and 9 shards with ids
// such as 10,11,1,8,...) through neardata and lake, and requires every part
// of the document in them: the block as served, each chunk with every
// member kept (unknown ones such as congestion_info and
// bandwidth_requests included) and its transactions, every state change,
// and a status per transaction holding its outcome and the outcomes of its
// receipts executed in the same block; committed, the archive answers them.
func TestRealDocumentsBecomeBundlesWithoutLoss(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := docsource.Config{Genesis: json.RawMessage(`{"genesis_height":0}`), Waits: replayWaits}
	for _, recorded := range testnetDocuments(t) {
		body := recorded.body
		// Loosely decoded to check a Bundle against: the block's height,
		// each chunk's members.
		var doc recordedDocument[struct {
			Header struct {
				Height uint64 `json:"height"`
			} `json:"header"`
		}, map[string]json.RawMessage]
		require.NoError(t, json.Unmarshal(body, &doc))
		height := doc.Block.Header.Height
		neardata, err := docsource.NewNeardataFetcher(fastHTTP(neardataServer(t, height, body).URL()), nil)
		require.NoError(t, err)
		lake, err := docsource.NewLakeFetcher(upstream.Config{Endpoints: []string{splitLake(t, height, body)}}, nil, nil)
		require.NoError(t, err)
		var bundles []*bundle.Bundle
		for _, docs := range []docsource.Fetcher{neardata, lake} {
			src, err := docsource.New(docs, nil, cfg, nil)
			require.NoError(t, err)
			src.Prepare(height)
			head, err := src.FinalHead(ctx)
			require.NoError(t, err)
			require.Equal(t, height, head)
			b, err := src.Bundle(ctx, height)
			require.NoError(t, err, recorded.name)
			bundles = append(bundles, b)
		}
		requireSameBundle(t, bundles[0], bundles[1], "lake vs neardata "+recorded.name)
		b := bundles[0]

		var whole struct {
			Block json.RawMessage `json:"block"`
		}
		require.NoError(t, json.Unmarshal(body, &whole))
		require.Equal(t, compact(t, whole.Block), string(b.BlockJSON), "block as served")
		require.Equal(t, height, b.Height())

		var changes []string
		txs := map[string]json.RawMessage{}      // hash -> outcome
		receipts := map[string]json.RawMessage{} // receipt id -> outcome
		require.Len(t, b.Chunks, len(doc.Shards))
		for i, sh := range doc.Shards {
			got := map[string]json.RawMessage{}
			require.NoError(t, json.Unmarshal(b.Chunks[i].JSON, &got))
			require.Equal(t, sh.ShardID, b.Chunks[i].View.Header.ShardID)
			var docTxs []struct {
				Transaction json.RawMessage `json:"transaction"`
				Outcome     struct {
					ExecutionOutcome json.RawMessage `json:"execution_outcome"`
				} `json:"outcome"`
			}
			require.NoError(t, json.Unmarshal(sh.Chunk["transactions"], &docTxs))
			var wantTxs []string
			for _, tx := range docTxs {
				wantTxs = append(wantTxs, compact(t, tx.Transaction))
				var id struct {
					Hash string `json:"hash"`
				}
				require.NoError(t, json.Unmarshal(tx.Transaction, &id))
				txs[id.Hash] = tx.Outcome.ExecutionOutcome
			}
			var gotTxs []json.RawMessage
			require.NoError(t, json.Unmarshal(got["transactions"], &gotTxs))
			require.Len(t, gotTxs, len(wantTxs))
			for j := range gotTxs {
				require.Equal(t, wantTxs[j], string(gotTxs[j]), "transaction kept verbatim")
			}
			for key, v := range sh.Chunk {
				switch key {
				case "transactions":
				case "local_receipts", "instant_receipts": // the indexer's own; `chunk` has none
					require.NotContains(t, got, key)
				default:
					require.Equal(t, compact(t, v), string(got[key]), "chunk member %s kept verbatim", key)
				}
			}
			require.Len(t, got, len(sh.Chunk)-boolInt(sh.Chunk["local_receipts"] != nil)-boolInt(sh.Chunk["instant_receipts"] != nil))
			for _, o := range sh.Outcome {
				var id struct {
					ID string `json:"id"`
				}
				require.NoError(t, json.Unmarshal(o.ExecutionOutcome, &id))
				receipts[id.ID] = o.ExecutionOutcome
			}
			for _, c := range sh.StateChanges {
				changes = append(changes, compact(t, c))
			}
		}
		var gotChanges []string
		for _, c := range b.Changes {
			gotChanges = append(gotChanges, string(c.JSON))
		}
		slices.Sort(changes)
		slices.Sort(gotChanges)
		require.Equal(t, changes, gotChanges, "every state change, verbatim")
		require.NotEmpty(t, b.Effects)
		require.LessOrEqual(t, len(b.Effects), len(b.Changes))

		require.Len(t, b.TxStatuses, len(txs))
		for _, st := range b.TxStatuses {
			var status struct {
				FinalExecutionStatus string            `json:"final_execution_status"`
				Transaction          json.RawMessage   `json:"transaction"`
				TransactionOutcome   json.RawMessage   `json:"transaction_outcome"`
				ReceiptsOutcome      []json.RawMessage `json:"receipts_outcome"`
			}
			require.NoError(t, json.Unmarshal(st.JSON, &status))
			require.Equal(t, compact(t, txs[st.TxHash]), string(status.TransactionOutcome))
			var outcome struct {
				Outcome struct {
					ReceiptIDs []string `json:"receipt_ids"`
				} `json:"outcome"`
			}
			require.NoError(t, json.Unmarshal(status.TransactionOutcome, &outcome))
			for _, id := range outcome.Outcome.ReceiptIDs {
				if o, ok := receipts[id]; ok {
					require.Contains(t, status.ReceiptsOutcome, json.RawMessage(compact(t, o)), "receipt %s executed in the same block", id)
				}
			}
			// Nothing after this block was read: FINAL only when every
			// receipt of the tree executed in it.
			complete := true
			for queue := outcome.Outcome.ReceiptIDs; len(queue) > 0; queue = queue[1:] {
				o, ok := receipts[queue[0]]
				if !ok {
					complete = false
					continue
				}
				var next struct {
					Outcome struct {
						ReceiptIDs []string `json:"receipt_ids"`
					} `json:"outcome"`
				}
				require.NoError(t, json.Unmarshal(o, &next))
				queue = append(queue, next.Outcome.ReceiptIDs...)
			}
			require.Equal(t, complete, status.FinalExecutionStatus == "FINAL", "tx %s is %s", st.TxHash, status.FinalExecutionStatus)
			require.Equal(t, height, st.BlockHeights[blockHashOf(t, status.TransactionOutcome)])
		}
		// Stored, the archive answers what the document held.
		st := storetest.NewStore(t)
		_, err = st.Commit(ctx, []bundle.Bundle{*b})
		require.NoError(t, err)
		block, err := st.BlockView(ctx, near.HeightID(height))
		require.NoError(t, err)
		require.JSONEq(t, string(b.BlockJSON), string(block))
		requireStoredAsCame(t, b.Chunks, func(c bundle.Chunk) (came, stored []byte, err error) {
			stored, err = st.ChunkView(ctx, c.View.Header.ChunkHash)
			return c.JSON, stored, err
		})
		effects, err := st.BlockEffects(ctx, height)
		require.NoError(t, err)
		require.Equal(t, b.Effects, effects)
		requireStoredAsCame(t, b.TxStatuses, func(s bundle.TxStatus) (came, stored []byte, err error) {
			stored, err = st.TxStatus(ctx, s.TxHash, s.SignerID, true)
			return s.JSON, stored, err
		})
		// Every transaction is in its block's chunk: no status repeats it.
		if len(b.TxStatuses) > 0 {
			compact, asServed, err := storetest.StatusForms(ctx, st.Pool(), height)
			require.NoError(t, err)
			require.Equal(t, len(b.TxStatuses), compact, "%d statuses kept as served", asServed)
		}
		t.Logf("%s: %d chunks, %d transactions, %d changes, %d effects", recorded.name, len(b.Chunks), len(b.TxStatuses), len(b.Changes), len(b.Effects))
	}
}

// requireStoredAsCame requires each of parts, read back from the store by
// read, to be the JSON it came with.
func requireStoredAsCame[P any](t *testing.T, parts []P, read func(P) (came, stored []byte, err error)) {
	t.Helper()
	for _, p := range parts {
		came, stored, err := read(p)
		require.NoError(t, err)
		require.Equal(t, string(came), string(stored), "byte for byte")
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func blockHashOf(t *testing.T, outcome json.RawMessage) string {
	t.Helper()
	var o struct {
		BlockHash string `json:"block_hash"`
	}
	require.NoError(t, json.Unmarshal(outcome, &o))
	require.True(t, strings.TrimSpace(o.BlockHash) != "")
	return o.BlockHash
}

// TestGenesisConfigFromFileSkipsRecords reads the genesis config out of a
// genesis.json (the simulator's, and mainnet's recorded state dump): every
// member but records, in file order.
func TestGenesisConfigFromFileSkipsRecords(t *testing.T) {
	t.Parallel()
	chain := simtest.New(t, sim.Config{Seed: 3, Shards: 2, TxsPerBlock: 1, ViewStateLimit: -1, MaxHeight: 1})
	path := filepath.Join(t.TempDir(), "genesis.json")
	require.NoError(t, chain.Node.WriteGenesis(path))
	for _, file := range []string{path, fixture.Path(t, "real/state_dump/mainnet-121015263-genesis.json")} {
		body, err := os.ReadFile(file)
		require.NoError(t, err)
		f, err := os.Open(file)
		require.NoError(t, err)
		got, err := docsource.GenesisConfigFromFile(f)
		f.Close()
		require.NoError(t, err)
		var want map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(body, &want))
		delete(want, "records")
		var gotMap map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(got, &gotMap))
		require.Len(t, gotMap, len(want))
		for k, v := range want {
			require.Equal(t, compact(t, v), compact(t, gotMap[k]), "%s of %s", k, filepath.Base(file))
		}
		require.NotContains(t, string(got), `"records"`)
		require.NotContains(t, string(got), "\n")
	}
	_, err := docsource.GenesisConfigFromFile(strings.NewReader(`{"records":[]}`))
	require.Error(t, err)
}

// neardataServer serves one recorded document at its height as neardata
// does (neardatatest), closed at the test's end.
func neardataServer(t *testing.T, height uint64, body []byte) *neardatatest.Server {
	t.Helper()
	srv := neardatatest.New(height, [][]byte{body})
	t.Cleanup(srv.Close)
	return srv
}
