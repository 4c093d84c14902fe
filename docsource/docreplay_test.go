package docsource_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/archive"
	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/rpctest"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/store/storetest"
)

// replayNode answers nearcore's JSON-RPC read methods for the blocks of
// recorded block documents as a node holding only those blocks answers
// them (its final head is the highest of them): `block`, `chunk`,
// `EXPERIMENTAL_changes_in_block`, `EXPERIMENTAL_changes`, `tx` and
// `EXPERIMENTAL_tx_status`. It is written from nearcore's rules, apart
// from the document source, so that the two can be compared:
//   - a chunk is nearcore's ChunkView: the document's chunk (an
//     IndexerChunkView) with each transaction without its outcome and
//     without the indexer's own local_receipts and instant_receipts,
//     author, header, transactions and receipts in that order (a
//     document saved with its keys sorted has receipts first);
//   - state changes are in trie key order (column Account, ContractCode,
//     AccessKey, ContractData; then account id; then the public key's
//     borsh bytes or the data key's bytes), the changes of one key in the
//     order they happened; changes_in_block lists each trie key's kind
//     and account once, in that order (an account with three data keys
//     touched is data_touched three times, as StateChangesKinds has it);
//     EXPERIMENTAL_changes walks the requested accounts in request order;
//   - a transaction's outcomes are the transaction's, then each receipt's
//     depth first in receipt_ids order (chain.rs
//     get_recursive_transaction_results), a receipt whose outcome is not
//     in these blocks ending its branch; status follows SuccessReceiptId.
//
// EXPERIMENTAL_protocol_config, which documents do not hold, answers a
// stand-in ({chain_id, protocol_version} of the block) so that both
// sources store the same one.
type replayNode struct {
	blocks   map[string]*replayBlock // by height and by hash
	chunks   map[string]json.RawMessage
	txs      map[string]replayTx
	outcomes map[string]replayOutcome // receipt id ->
	head     *replayBlock
}

type replayBlock struct {
	height  uint64
	hash    string
	raw     json.RawMessage
	chunks  map[uint64]string // shard id -> chunk hash
	changes []replayChange    // in trie key order
	version uint32
}

type replayChange struct {
	raw     json.RawMessage
	column  byte
	account string
	key     []byte
	kind    string // its changes_in_block type
}

type replayTx struct {
	raw, outcome json.RawMessage
	receiptIDs   []string
	status       json.RawMessage
}

type replayOutcome struct {
	raw, receipt json.RawMessage
	receiptIDs   []string
	status       json.RawMessage
}

func newReplayNode(t *testing.T, documents [][]byte) *replayNode {
	t.Helper()
	n := &replayNode{blocks: map[string]*replayBlock{}, chunks: map[string]json.RawMessage{},
		txs: map[string]replayTx{}, outcomes: map[string]replayOutcome{}}
	for _, body := range documents {
		var doc recordedDocument[json.RawMessage, json.RawMessage]
		require.NoError(t, json.Unmarshal(body, &doc))
		var header struct {
			Header struct {
				Height          uint64 `json:"height"`
				Hash            string `json:"hash"`
				ProtocolVersion uint32 `json:"latest_protocol_version"`
			} `json:"header"`
			Chunks []struct {
				ChunkHash string `json:"chunk_hash"`
				ShardID   uint64 `json:"shard_id"`
			} `json:"chunks"`
		}
		require.NoError(t, json.Unmarshal(doc.Block, &header))
		b := &replayBlock{height: header.Header.Height, hash: header.Header.Hash, raw: compactRaw(t, doc.Block),
			chunks: map[uint64]string{}, version: header.Header.ProtocolVersion}
		for _, c := range header.Chunks {
			b.chunks[c.ShardID] = c.ChunkHash
		}
		for _, sh := range doc.Shards {
			if len(sh.Chunk) > 0 && string(sh.Chunk) != "null" {
				hash, chunk := replayChunk(t, sh.Chunk, n.txs)
				n.chunks[hash] = chunk
			}
			for _, o := range sh.Outcome {
				var v struct {
					ID      string `json:"id"`
					Outcome struct {
						ReceiptIDs []string        `json:"receipt_ids"`
						Status     json.RawMessage `json:"status"`
					} `json:"outcome"`
				}
				require.NoError(t, json.Unmarshal(o.ExecutionOutcome, &v))
				n.outcomes[v.ID] = replayOutcome{raw: compactRaw(t, o.ExecutionOutcome), receipt: compactRaw(t, o.Receipt),
					receiptIDs: v.Outcome.ReceiptIDs, status: v.Outcome.Status}
			}
			for _, c := range sh.StateChanges {
				b.changes = append(b.changes, replayStateChange(t, c))
			}
		}
		// Stable: the changes of one key keep the order they happened in.
		slices.SortStableFunc(b.changes, func(x, y replayChange) int {
			if x.column != y.column {
				return int(x.column) - int(y.column)
			}
			if c := strings.Compare(x.account, y.account); c != 0 {
				return c
			}
			return bytes.Compare(x.key, y.key)
		})
		n.blocks[fmt.Sprint(b.height)] = b
		n.blocks[b.hash] = b
		if n.head == nil || b.height > n.head.height {
			n.head = b
		}
	}
	return n
}

func compactRaw(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	return json.RawMessage(compact(t, raw))
}

// replayChunk returns the chunk's hash and its `chunk` answer, noting its
// transactions' outcomes in txs.
func replayChunk(t *testing.T, raw json.RawMessage, txs map[string]replayTx) (string, json.RawMessage) {
	t.Helper()
	var hash string
	var out bytes.Buffer
	out.WriteByte('{')
	dec := json.NewDecoder(bytes.NewReader(raw))
	_, err := dec.Token()
	require.NoError(t, err)
	type member struct {
		key   string
		value json.RawMessage
	}
	var members []member
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		key := tok.(string)
		var value json.RawMessage
		require.NoError(t, dec.Decode(&value))
		switch key {
		case "local_receipts", "instant_receipts":
			continue
		case "header":
			var h struct {
				ChunkHash string `json:"chunk_hash"`
			}
			require.NoError(t, json.Unmarshal(value, &h))
			hash = h.ChunkHash
		case "transactions":
			var list []struct {
				Transaction json.RawMessage `json:"transaction"`
				Outcome     struct {
					ExecutionOutcome json.RawMessage `json:"execution_outcome"`
				} `json:"outcome"`
			}
			require.NoError(t, json.Unmarshal(value, &list))
			plain := make([]json.RawMessage, len(list))
			for i, tx := range list {
				plain[i] = compactRaw(t, tx.Transaction)
				var id struct {
					Hash string `json:"hash"`
				}
				require.NoError(t, json.Unmarshal(tx.Transaction, &id))
				var o struct {
					Outcome struct {
						ReceiptIDs []string        `json:"receipt_ids"`
						Status     json.RawMessage `json:"status"`
					} `json:"outcome"`
				}
				require.NoError(t, json.Unmarshal(tx.Outcome.ExecutionOutcome, &o))
				txs[id.Hash] = replayTx{raw: plain[i], outcome: compactRaw(t, tx.Outcome.ExecutionOutcome),
					receiptIDs: o.Outcome.ReceiptIDs, status: o.Outcome.Status}
			}
			value, err = json.Marshal(plain)
			require.NoError(t, err)
		}
		members = append(members, member{key, value})
	}
	// ChunkView's members in its order, then any other.
	order := func(key string) int {
		if i := slices.Index([]string{"author", "header", "transactions", "receipts"}, key); i >= 0 {
			return i
		}
		return 4
	}
	slices.SortStableFunc(members, func(a, b member) int { return order(a.key) - order(b.key) })
	for i, m := range members {
		if i > 0 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		out.Write(k)
		out.WriteByte(':')
		out.WriteString(compact(t, m.value))
	}
	out.WriteByte('}')
	return hash, out.Bytes()
}

// replayStateChange places a document's state change in trie key order.
func replayStateChange(t *testing.T, raw json.RawMessage) replayChange {
	t.Helper()
	var v struct {
		Type   string `json:"type"`
		Change struct {
			AccountID string `json:"account_id"`
			PublicKey string `json:"public_key"`
			KeyBase64 string `json:"key_base64"`
		} `json:"change"`
	}
	require.NoError(t, json.Unmarshal(raw, &v))
	c := replayChange{raw: compactRaw(t, raw), account: v.Change.AccountID}
	switch v.Type {
	case "account_update", "account_deletion":
		c.column, c.kind = 0, "account_touched"
	case "contract_code_update", "contract_code_deletion":
		c.column, c.kind = 1, "contract_code_touched"
	case "access_key_update", "access_key_deletion":
		c.column, c.kind = 2, "access_key_touched"
		key, err := publicKeyBytes(v.Change.PublicKey)
		require.NoError(t, err)
		c.key = key
	case "data_update", "data_deletion":
		c.column, c.kind = 9, "data_touched"
		key, err := base64.StdEncoding.DecodeString(v.Change.KeyBase64)
		require.NoError(t, err)
		c.key = key
	default:
		t.Fatalf("a state change of type %s: the replay does not know its trie column", v.Type)
	}
	return c
}

// publicKeyBytes is a public key as its trie key ends: borsh, a key type
// byte and the key.
func publicKeyBytes(pk string) ([]byte, error) {
	kind, data, _ := strings.Cut(pk, ":")
	types := map[string]byte{"ed25519": 0, "secp256k1": 1}
	if _, ok := types[kind]; !ok {
		return nil, fmt.Errorf("public key %q: unknown key type", pk)
	}
	key, err := near.Base58Decode(data)
	if err != nil {
		return nil, fmt.Errorf("public key %q: %w", pk, err)
	}
	return append([]byte{types[kind]}, key...), nil
}

// ServeHTTP answers one JSON-RPC request.
func (n *replayNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	result, cause := n.answer(req.Method, req.Params)
	var resp []byte
	if cause != "" {
		resp = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"name":"HANDLER_ERROR","cause":{"name":%q,"info":{}},"code":-32000,"message":"Server error","data":%q}}`,
			req.ID, cause, cause)
	} else {
		resp = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(resp)
}

type replayParams struct {
	BlockID     json.RawMessage `json:"block_id"`
	Finality    string          `json:"finality"`
	ChunkID     string          `json:"chunk_id"`
	ShardID     *uint64         `json:"shard_id"`
	ChangesType string          `json:"changes_type"`
	AccountIDs  []string        `json:"account_ids"`
	KeyPrefix   *string         `json:"key_prefix_base64"`
	Keys        []struct {
		AccountID string `json:"account_id"`
		PublicKey string `json:"public_key"`
	} `json:"keys"`
	TxHash string `json:"tx_hash"`
	Sender string `json:"sender_account_id"`
}

// answer returns the result of method, or the name of the error's cause.
func (n *replayNode) answer(method string, raw json.RawMessage) (json.RawMessage, string) {
	var p replayParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, "PARSE_ERROR"
	}
	block := n.head
	if p.Finality == "" && len(p.BlockID) > 0 {
		block = n.blocks[strings.Trim(string(p.BlockID), `"`)]
	}
	switch method {
	case "block":
		if block == nil {
			return nil, "UNKNOWN_BLOCK"
		}
		return block.raw, ""
	case "chunk":
		hash := p.ChunkID
		if hash == "" {
			if block == nil {
				return nil, "UNKNOWN_BLOCK"
			}
			if hash = block.chunks[*p.ShardID]; hash == "" {
				return nil, "INVALID_SHARD_ID"
			}
		}
		if c, ok := n.chunks[hash]; ok {
			return c, ""
		}
		return nil, "UNKNOWN_CHUNK"
	case "EXPERIMENTAL_protocol_config":
		if block == nil {
			return nil, "UNKNOWN_BLOCK"
		}
		return fmt.Appendf(nil, `{"chain_id":"testnet","protocol_version":%d}`, block.version), ""
	case "EXPERIMENTAL_changes_in_block":
		if block == nil {
			return nil, "UNKNOWN_BLOCK"
		}
		var kinds []string
		for i, c := range block.changes {
			prev := replayChange{column: 255}
			if i > 0 {
				prev = block.changes[i-1]
			}
			if c.column != prev.column || c.account != prev.account || !bytes.Equal(c.key, prev.key) {
				kinds = append(kinds, fmt.Sprintf(`{"type":%q,"account_id":%q}`, c.kind, c.account))
			}
		}
		return fmt.Appendf(nil, `{"block_hash":%q,"changes":[%s]}`, block.hash, strings.Join(kinds, ",")), ""
	case "EXPERIMENTAL_changes":
		if block == nil {
			return nil, "UNKNOWN_BLOCK"
		}
		return fmt.Appendf(nil, `{"block_hash":%q,"changes":[%s]}`, block.hash, strings.Join(n.changes(block, p), ",")), ""
	case "tx", "EXPERIMENTAL_tx_status":
		tx, ok := n.txs[p.TxHash]
		if !ok {
			return nil, "UNKNOWN_TRANSACTION"
		}
		return n.txStatus(tx, method == "EXPERIMENTAL_tx_status"), ""
	}
	return nil, "METHOD_NOT_FOUND"
}

// changes answers EXPERIMENTAL_changes: for each requested account (or
// key) in request order, its changes of the requested kind in trie order.
func (n *replayNode) changes(block *replayBlock, p replayParams) []string {
	type want struct {
		account string
		key     []byte // nil: every key
	}
	var wants []want
	kind := map[string]string{"account_changes": "account_touched", "all_access_key_changes": "access_key_touched",
		"single_access_key_changes": "access_key_touched", "contract_code_changes": "contract_code_touched",
		"data_changes": "data_touched"}[p.ChangesType]
	for _, a := range p.AccountIDs {
		wants = append(wants, want{account: a})
	}
	for _, k := range p.Keys {
		if key, err := publicKeyBytes(k.PublicKey); err == nil {
			wants = append(wants, want{account: k.AccountID, key: key})
		}
	}
	var prefix []byte
	if p.KeyPrefix != nil {
		prefix, _ = base64.StdEncoding.DecodeString(*p.KeyPrefix)
	}
	var out []string
	for _, w := range wants {
		for _, c := range block.changes {
			if c.kind != kind || c.account != w.account || (w.key != nil && !bytes.Equal(c.key, w.key)) ||
				(kind == "data_touched" && !bytes.HasPrefix(c.key, prefix)) {
				continue
			}
			out = append(out, string(c.raw))
		}
	}
	return out
}

// txStatus assembles a transaction's status from the outcomes these
// blocks hold, receipts included for EXPERIMENTAL_tx_status.
func (n *replayNode) txStatus(tx replayTx, withReceipts bool) json.RawMessage {
	var outcomes, receipts []string
	complete := true
	var walk func(id string)
	walk = func(id string) {
		o, ok := n.outcomes[id]
		if !ok {
			complete = false
			return
		}
		outcomes = append(outcomes, string(o.raw))
		if len(o.receipt) > 0 && string(o.receipt) != "null" {
			receipts = append(receipts, string(o.receipt))
		}
		for _, child := range o.receiptIDs {
			walk(child)
		}
	}
	for _, id := range tx.receiptIDs {
		walk(id)
	}
	status := json.RawMessage(`"Started"`)
	for next := tx.status; ; {
		var link struct {
			SuccessReceiptID *string `json:"SuccessReceiptId"`
		}
		if json.Unmarshal(next, &link) != nil || link.SuccessReceiptID == nil {
			status = next
			break
		}
		o, ok := n.outcomes[*link.SuccessReceiptID]
		if !ok {
			break
		}
		next = o.status
	}
	execution := "FINAL"
	switch {
	case string(status) == `"Started"`:
		execution = "INCLUDED_FINAL"
	case !complete:
		execution = "EXECUTED"
	}
	s := fmt.Sprintf(`{"final_execution_status":%q,"status":%s,"transaction":%s,"transaction_outcome":%s,"receipts_outcome":[%s]`,
		execution, status, tx.raw, tx.outcome, strings.Join(outcomes, ","))
	if withReceipts && len(receipts) > 0 {
		s += `,"receipts":[` + strings.Join(receipts, ",") + `]`
	}
	return json.RawMessage(s + "}")
}

// TestRealDocumentsIndexAndServeAsTheirRPCReplay indexes each recorded
// testnet document twice, through the RPC source from a replay of it
// (nearcore's answers for that block, built from the document by
// nearcore's rules) and through neardata from the document itself, and
// requires the same Bundle from both; committed, the archive's answers to
// every request the replay can answer (blocks, chunks by hash and by
// shard id, changes_in_block, each kind of changes for every account and
// key touched, tx and EXPERIMENTAL_tx_status) are the replay's, byte for
// byte.
func TestRealDocumentsIndexAndServeAsTheirRPCReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, recorded := range testnetDocuments(t) {
		body := recorded.body
		node := newReplayNode(t, [][]byte{body})
		height := node.head.height
		replay := httptest.NewServer(node)
		t.Cleanup(replay.Close)

		rpcSrc := simtest.NodeSource(t, rpcClient(t, replay.URL), rpcsource.Config{Waits: replayWaits})
		neardata, err := docsource.NewNeardataFetcher(fastHTTP(neardataServer(t, height, body).URL()), nil)
		require.NoError(t, err)
		docSrc := docSource(t, neardata, rpcClient(t, replay.URL), replayWaits)
		var bundles []*bundle.Bundle
		for _, src := range []indexer.Source{rpcSrc, docSrc} {
			src.Prepare(height)
			b, err := src.Bundle(ctx, height)
			require.NoError(t, err, recorded.name)
			bundles = append(bundles, b)
		}
		name := recorded.name
		requireSameBundle(t, bundles[0], bundles[1], "rpc replay vs neardata "+name)

		st := storetest.NewStore(t)
		_, err = st.Commit(ctx, []bundle.Bundle{*bundles[1]})
		require.NoError(t, err)
		backend, err := archive.New(st, nil, archive.Config{}, nil)
		require.NoError(t, err)
		served, err := rpcserve.NewHandler(backend, rpcserve.Config{}, nil)
		require.NoError(t, err)
		reqs := replayRequests(t, node)
		for _, req := range reqs {
			want, cause := node.answer(req.method, req.params)
			require.Empty(t, cause, "%s: the replay answers %s %s", name, req.method, req.params)
			got := postResult(t, served, req.method, req.params)
			require.Equal(t, compact(t, want), compact(t, got), "%s: %s %s", name, req.method, req.params)
		}
		t.Logf("%s: %d chunks, %d transactions, %d changes; %d requests served as the replay answers them",
			name, len(bundles[1].Chunks), len(bundles[1].TxStatuses), len(bundles[1].Changes), len(reqs))
	}
}

type replayRequest struct {
	method string
	params json.RawMessage
}

// replayRequests lists every request the replay answers for its block.
func replayRequests(t *testing.T, n *replayNode) []replayRequest {
	t.Helper()
	b := n.head
	var reqs []replayRequest
	add := func(method string, params any) {
		raw, err := json.Marshal(params)
		require.NoError(t, err)
		reqs = append(reqs, replayRequest{method, raw})
	}
	for _, id := range []any{b.height, b.hash} {
		add("block", map[string]any{"block_id": id})
		add("EXPERIMENTAL_changes_in_block", map[string]any{"block_id": id})
	}
	for shard, hash := range b.chunks {
		add("chunk", map[string]any{"chunk_id": hash})
		add("chunk", map[string]any{"block_id": b.height, "shard_id": shard})
	}
	byKind := map[string][]string{}
	for _, c := range b.changes {
		if !slices.Contains(byKind[c.kind], c.account) {
			byKind[c.kind] = append(byKind[c.kind], c.account)
		}
		if c.kind == "access_key_touched" {
			var v struct {
				Change struct {
					PublicKey string `json:"public_key"`
				} `json:"change"`
			}
			require.NoError(t, json.Unmarshal(c.raw, &v))
			add("EXPERIMENTAL_changes", map[string]any{"block_id": b.hash, "changes_type": "single_access_key_changes",
				"keys": []map[string]string{{"account_id": c.account, "public_key": v.Change.PublicKey}}})
		}
		if c.kind == "data_touched" {
			add("EXPERIMENTAL_changes", map[string]any{"block_id": b.height, "changes_type": "data_changes",
				"account_ids": []string{c.account}, "key_prefix_base64": base64.StdEncoding.EncodeToString(c.key)})
		}
	}
	for kind, changesType := range map[string]string{"account_touched": "account_changes", "access_key_touched": "all_access_key_changes",
		"contract_code_touched": "contract_code_changes", "data_touched": "data_changes"} {
		accounts := byKind[kind]
		if len(accounts) == 0 {
			continue
		}
		params := map[string]any{"block_id": b.hash, "changes_type": changesType, "account_ids": accounts}
		if kind == "data_touched" {
			params["key_prefix_base64"] = ""
		}
		add("EXPERIMENTAL_changes", params)
		for _, a := range accounts {
			params := map[string]any{"block_id": b.height, "changes_type": changesType, "account_ids": []string{a}}
			if kind == "data_touched" {
				params["key_prefix_base64"] = ""
			}
			add("EXPERIMENTAL_changes", params)
		}
	}
	for hash, tx := range n.txs {
		var v struct {
			SignerID string `json:"signer_id"`
		}
		require.NoError(t, json.Unmarshal(tx.raw, &v))
		for _, method := range []string{"tx", "EXPERIMENTAL_tx_status"} {
			add(method, map[string]string{"tx_hash": hash, "sender_account_id": v.SignerID})
		}
	}
	return reqs
}

// postResult posts a JSON-RPC request to h and returns its result,
// failing on an error answer.
func postResult(t *testing.T, h http.Handler, method string, params json.RawMessage) json.RawMessage {
	t.Helper()
	result, rerr := rpctest.Call(t, h, method, params)
	require.Nil(t, rerr, "%s %s", method, params)
	return result
}
