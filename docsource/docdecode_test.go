package docsource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/fixture"
)

// TestDecodeDocumentKeepsWhatCame: through the document path, member names
// match exactly (a "Block" or "SHARDS" is not "block" or "shards"), a u64
// above 2^53 stays exact, raw parts and unknown members are kept byte for
// byte, and a document that did not come compact is compacted once.
func TestDecodeDocumentKeepsWhatCame(t *testing.T) {
	const change = `{"cause":{"type":"receipt_processing","receipt_hash":"R"},"type":"data_update","change":{"account_id":"a.near","key_base64":"AA==","value_base64":"AQ=="},"future_member":{"x":[1,2]}}`
	const outcome = `{"proof":[],"block_hash":"B","id":"R","outcome":{"logs":[],"receipt_ids":[],"gas_burnt":18446744073709551615,"tokens_burnt":"340282366920938463463374607431768211455","executor_id":"a.near","status":{"SuccessValue":""},"metadata":{"version":3,"gas_profile":null}},"extra":"kept"}`
	doc := `{"Block":{"wrong":1},"block":{"header":{"height":9007199254740993}},"SHARDS":[{"shard_id":7}],"shards":[{"shard_id":9007199254740993,"chunk":null,` +
		`"receipt_execution_outcomes":[{"execution_outcome":` + outcome + `,"receipt":{"r":1},"tx_hash":"T"}],"state_changes":[` + change + `],"Shard_Id":1}],"unknown":{"kept":"nowhere"}}`
	for name, body := range map[string]string{"compact": doc, "spaced": strings.ReplaceAll(strings.ReplaceAll(doc, ",", ", "), ":", ": ")} {
		d, err := decodeDocument([]byte(body))
		require.NoError(t, err, name)
		require.JSONEq(t, `{"header":{"height":9007199254740993}}`, string(d.Block), name)
		require.Len(t, d.Shards, 1, name)
		sh := d.Shards[0]
		require.Equal(t, uint64(9007199254740993), sh.ShardID, name)
		require.Equal(t, "null", string(sh.Chunk), name)
		require.Equal(t, outcome, string(sh.ReceiptExecutionOutcomes[0].ExecutionOutcome), name)
		require.Equal(t, `{"r":1}`, string(sh.ReceiptExecutionOutcomes[0].Receipt), name)
		require.Equal(t, "T", *sh.ReceiptExecutionOutcomes[0].TxHash, name)
		require.Equal(t, []json.RawMessage{json.RawMessage(change)}, sh.StateChanges, name)

		p, err := parseDocument(d)
		require.NoError(t, err, name)
		require.Equal(t, uint64(9007199254740993), p.height, name)
		o := p.outcomes["R"]
		require.Equal(t, outcome, string(o.raw), name)
		require.Equal(t, uint64(18446744073709551615), o.fields.Outcome.GasBurnt, name)
		require.Equal(t, "340282366920938463463374607431768211455", o.fields.Outcome.TokensBurnt.String(), name)
		require.Len(t, p.changes, 1, name)
		require.Equal(t, change, string(p.changes[0].JSON), name)
	}
	_, err := decodeDocument([]byte(`{"Block":{"header":{"height":1}},"shards":[]}`))
	require.ErrorContains(t, err, "without a block")
}

// TestChunkAnswerKeepsMembersAsTheyCame: the `chunk` answer built from a
// document's chunk keeps every member but the indexer-only ones in place
// and as it came (unknown ones, escaped names), each transaction without
// its outcome.
func TestChunkAnswerKeepsMembersAsTheyCame(t *testing.T) {
	tx := `{"signer_id":"s.near","public_key":"ed25519:K","nonce":9007199254740993,"receiver_id":"r.near","actions":[],"priority_fee":0,"signature":"ed25519:S","hash":"H","new_member":true}`
	eo := `{"proof":[],"block_hash":"B","id":"H","outcome":{"logs":[],"receipt_ids":["R"],"gas_burnt":1,"tokens_burnt":"2","executor_id":"s.near","status":{"SuccessReceiptId":"R"},"metadata":{"version":1,"gas_profile":null}}}`
	raw := `{"author":"a","header":{"chunk_hash":"C","shard_id":0},"transactions":[{"transaction":` + tx + `,"outcome":{"execution_outcome":` + eo + `,"receipt":null}}],` +
		`"receipts":[],"local_receipts":[{"x":1}],"instant_receipts":[{"x":2}],"new\u005fmember":{"y":[1]}}`
	c, txs, err := parseChunkBothWays(t, raw)
	require.NoError(t, err)
	require.Equal(t, `{"author":"a","header":{"chunk_hash":"C","shard_id":0},"transactions":[`+tx+`],"receipts":[],"new\u005fmember":{"y":[1]}}`, string(c.JSON))
	require.Equal(t, uint64(9007199254740993), c.View.Transactions[0].Nonce)
	require.Len(t, txs, 1)
	require.Equal(t, "H", txs[0].hash)
	require.Equal(t, "s.near", txs[0].signerID)
	require.Equal(t, eo, string(txs[0].outcome.raw))
	require.Equal(t, []string{"R"}, txs[0].outcome.receiptIDs)
}

// TestRealDocumentDecodesAsEncodingJSONDoes: the real mainnet document's
// views decoded through the new path equal encoding/json's decoding of the
// same bytes, and every outcome's fields are what the store decodes of
// them (TxStatus.Body is handed over instead of decoded again).
func TestRealDocumentDecodesAsEncodingJSONDoes(t *testing.T) {
	body := fixture.Read(t, "real/neardata/mainnet-151768255.json")
	d, err := decodeDocument(body)
	require.NoError(t, err)
	var want BlockDocument
	require.NoError(t, json.Unmarshal(body, &want))
	parts := *d
	parts.Shards = slices.Clone(d.Shards)
	for i := range parts.Shards {
		require.NotNil(t, parts.Shards[i].chunk, "shard %d's chunk taken apart as it was scanned", i)
		parts.Shards[i].chunk = nil
	}
	require.True(t, reflect.DeepEqual(want, parts), "the document's parts as encoding/json splits them")
	p, err := parseDocument(d)
	require.NoError(t, err)
	require.Equal(t, 313, len(p.outcomes))
	for id, o := range p.outcomes {
		var f bundle.OutcomeFields
		require.NoError(t, json.Unmarshal(o.raw, &f))
		require.Equal(t, f, *o.fields, id)
	}
	for shard, c := range p.chunks {
		var view = c.View
		require.NoError(t, json.Unmarshal(c.JSON, &view))
		require.Equal(t, view, c.View, "shard %d", shard)
	}
	for i, ch := range p.changes {
		view := ch.View
		require.NoError(t, json.Unmarshal(ch.JSON, &view))
		require.Equal(t, view, ch.View, "change %d", i)
	}
}

// TestChunkAnswerFollowsChunkView: whatever a document's chunk holds, the
// `chunk` answer has nearcore's ChunkView members in ChunkView's order,
// never an indexer-only member (local_receipts, instant_receipts, however
// their names are written), and every other member where it came.
func TestChunkAnswerFollowsChunkView(t *testing.T) {
	t.Parallel()
	const (
		author   = `"author":"a"`
		header   = `"header":{"chunk_hash":"C","shard_id":10}`
		txs      = `"transactions":[]`
		receipts = `"receipts":[{"predecessor_id":"p","receiver_id":"r","receipt_id":"R1","receipt":{"Data":{"data_id":"D","data":null,"is_promise_resume":true}},"priority":0}]`
		local    = `"local_receipts":[{"receipt_id":"L"}]`
		instant  = `"instant_receipts":[{"predecessor_id":"v","receiver_id":"v","receipt_id":"I","receipt":{"Action":{"is_promise_yield":true}},"priority":0}]`
	)
	obj := func(ms ...string) string { return "{" + strings.Join(ms, ",") + "}" }
	for _, tc := range []struct{ name, doc, want string }{
		{"protocol 86 (IndexerChunkView of nearcore 2.13)", obj(author, header, txs, receipts, local, instant), obj(author, header, txs, receipts)},
		{"empty indexer-only lists", obj(author, header, txs, receipts, `"local_receipts":[]`, `"instant_receipts":[]`), obj(author, header, txs, receipts)},
		{"before instant receipts", obj(author, header, txs, receipts, local), obj(author, header, txs, receipts)},
		{"escaped names", obj(author, header, txs, receipts, `"instant\u005freceipts":[]`, `"local_r\u0065ceipts":[]`), obj(author, header, txs, receipts)},
		{"members out of order", obj(instant, receipts, txs, header, author), obj(author, header, txs, receipts)},
		{"a member nearcore adds", obj(author, header, `"next":{"x":[1]}`, txs, receipts, instant), obj(author, header, `"next":{"x":[1]}`, txs, receipts)},
		{"an added member, out of order", obj(receipts, `"next":1`, author, header, txs), obj(author, `"next":1`, header, txs, receipts)},
	} {
		c, _, err := parseChunkBothWays(t, tc.doc)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, string(c.JSON), tc.name)
		require.NotContains(t, string(c.JSON), "instant", tc.name)
		require.Equal(t, "a", c.View.Author, tc.name)
		require.Len(t, c.View.Receipts, 1, tc.name)
	}
}

// parseChunkBothWays parses a document's chunk as parseDocument does, from
// what the document's scan found of it, and from its bytes alone, and
// holds the two to the same answer, transactions and error.
func parseChunkBothWays(t *testing.T, raw string) (bundle.Chunk, []docTx, error) {
	t.Helper()
	c, txs, err := parseChunk(json.RawMessage(raw), nil)
	end, scan, scanErr := scanChunk([]byte(raw), 0)
	if scanErr != nil {
		require.Error(t, err, "a chunk the document's scan refuses is refused by its parse")
		return c, txs, err
	}
	require.Equal(t, len(raw), end)
	sc, stxs, serr := parseChunk(json.RawMessage(raw), scan)
	require.Equal(t, fmt.Sprint(err), fmt.Sprint(serr), raw)
	require.Equal(t, string(c.JSON), string(sc.JSON), raw)
	require.Equal(t, c.View, sc.View, raw)
	require.Equal(t, txs, stxs, raw)
	return c, txs, err
}

// TestChunkTransactionsOfAnotherShape: a chunk whose transactions are not
// a list of {transaction, outcome} objects is refused with the same error
// whether its parts come from the document's scan or from its bytes.
func TestChunkTransactionsOfAnotherShape(t *testing.T) {
	t.Parallel()
	eo := `{"proof":[],"block_hash":"B","id":"H","outcome":{"logs":[],"receipt_ids":[],"gas_burnt":1,"tokens_burnt":"2","executor_id":"s.near","status":{"SuccessValue":""},"metadata":{"version":1,"gas_profile":null}}}`
	tx := `{"signer_id":"s.near","public_key":"ed25519:K","nonce":1,"receiver_id":"r.near","actions":[],"priority_fee":0,"signature":"ed25519:S","hash":"H"}`
	chunk := func(txs string) string {
		return `{"author":"a","header":{"chunk_hash":"C","shard_id":0},"transactions":` + txs + `,"receipts":[]}`
	}
	for txs, want := range map[string]string{
		`{"a":1}`: "decode chunk transactions",
		`[1]`:     "decode chunk transaction 0",
		`[{"transaction":` + tx + `,"outcome":{"execution_outcome":` + eo + `}},{"outcome":null}]`:                  "decode chunk transaction 1: no transaction",
		`[{"transaction":` + tx + `,"outcome":null}]`:                                                               "decode chunk transaction 0: no execution_outcome",
		`[{"transaction":` + tx + `,"outcome":[1]}]`:                                                                "decode chunk transaction 0 outcome",
		`[{"transaction":` + tx + `,"outcome":{"execution_outcome":` + eo + `}},{"transaction":1,"outcome":"x"}]`:   "decode chunk transaction 1 outcome",
		`[{"transaction":` + tx + `,"outcome":{"execution_outcome":` + eo + `},"outcome":null}]`:                    "decode chunk transaction 0: no execution_outcome",
		`[{"outcome":{"execution_outcome":1},"transaction":` + tx + `,"outcome":{"execution_outcome":` + eo + `}}]`: "",
	} {
		_, got, err := parseChunkBothWays(t, chunk(txs))
		if want == "" {
			require.NoError(t, err, txs)
			require.Len(t, got, 1, txs)
			require.Equal(t, eo, string(got[0].outcome.raw), txs)
			continue
		}
		require.ErrorContains(t, err, want, txs)
	}
}

// FuzzParseChunkBothWays: for any compact chunk, the parts the document's
// scan finds give the answer, transactions and error its bytes alone give.
func FuzzParseChunkBothWays(f *testing.F) {
	eo := `{"proof":[],"block_hash":"B","id":"H","outcome":{"logs":[],"receipt_ids":["R"],"gas_burnt":1,"tokens_burnt":"2","executor_id":"s.near","status":{"SuccessReceiptId":"R"},"metadata":{"version":1,"gas_profile":null}}}`
	tx := `{"signer_id":"s.near","public_key":"ed25519:K","nonce":1,"receiver_id":"r.near","actions":[],"priority_fee":0,"signature":"ed25519:S","hash":"H"}`
	f.Add(`{"author":"a","header":{"chunk_hash":"C","shard_id":0},"transactions":[{"transaction":` + tx + `,"outcome":{"execution_outcome":` + eo + `,"receipt":null}}],"receipts":[],"local_receipts":[]}`)
	f.Add(`{"author":"a","header":{"chunk_hash":"C","shard_id":0},"transactions":[{"outcome":null,"transaction":1}],"receipts":[]}`)
	f.Add(`{"transactions":null,"author":"a","header":{},"receipts":[],"transactions":[]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(raw)) != nil {
			return
		}
		_, _, _ = parseChunkBothWays(t, buf.String())
	})
}

// documentShapes is a document with a part of every shape the scan takes
// apart: a chunk with a transaction and its outcome, a receipt's outcome,
// a state change.
const documentShapes = `{"block":{"header":{"height":1}},"shards":[{"shard_id":0,"chunk":{"author":"a","header":{"shard_id":0},` +
	`"transactions":[{"transaction":{"hash":"H"},"outcome":{"execution_outcome":{"id":"H"},"receipt":null}}],"receipts":[]},` +
	`"receipt_execution_outcomes":[{"execution_outcome":{"id":"R","outcome":{"logs":[]}},"receipt":{"receipt_id":"R"},"tx_hash":"H"}],` +
	`"state_changes":[{"type":"account_update","change":{"account_id":"a"}}]}]}`

// TestTruncatedDocumentsAreRefused: every document cut short, wherever
// the cut falls, is refused with an error, never a panic.
func TestTruncatedDocumentsAreRefused(t *testing.T) {
	t.Parallel()
	_, err := decodeDocument([]byte(documentShapes))
	require.NoError(t, err)
	for i := range len(documentShapes) - 1 {
		require.NotPanics(t, func() {
			_, err := decodeDocument([]byte(documentShapes[:i]))
			require.Error(t, err, "cut after %d bytes", i)
		}, "cut after %d bytes", i)
	}
}

// FuzzDecodeDocument: a document the scan takes is JSON, and no text makes
// it panic.
func FuzzDecodeDocument(f *testing.F) {
	f.Add(documentShapes)
	f.Add(`{"block":{},"shards":[{"chunk":{"transactions":[1,{"outcome":[]}]}}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		if _, err := decodeDocument([]byte(doc)); err == nil {
			require.True(t, json.Valid([]byte(doc)), "%q", doc)
		}
	})
}
