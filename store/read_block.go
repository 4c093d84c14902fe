package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/near"
)

// LatestBlock returns the newest committed block: the highest of the
// cursors' last blocks.
func (s *Store) LatestBlock(ctx context.Context) (height uint64, hash string, err error) {
	var h int64
	err = s.pool.QueryRow(ctx, `SELECT height, hash FROM indexer_cursor ORDER BY height DESC LIMIT 1`).Scan(&h, &hash)
	if err != nil {
		return 0, "", notFound(err, "latest block")
	}
	return uint64(h), hash, nil
}

// EarliestBlock returns the lowest stored block.
func (s *Store) EarliestBlock(ctx context.Context) (height uint64, hash string, err error) {
	var h int64
	err = s.pool.QueryRow(ctx, `SELECT height, hash FROM blocks ORDER BY height LIMIT 1`).Scan(&h, &hash)
	if err != nil {
		return 0, "", notFound(err, "earliest block")
	}
	return uint64(h), hash, nil
}

// blockWhere returns the WHERE clause and argument selecting block id.
func blockWhere(id near.BlockID) (string, any) {
	if id.IsHeight() {
		return "height = $1", int64(id.Height)
	}
	return "hash = $1", id.Hash
}

// BlockView returns the stored `block` result.
func (s *Store) BlockView(ctx context.Context, id near.BlockID) (json.RawMessage, error) {
	where, arg := blockWhere(id)
	var view string
	if err := s.pool.QueryRow(ctx, `SELECT view::text FROM blocks WHERE `+where, arg).Scan(&view); err != nil {
		return nil, notFound(err, "block "+id.String())
	}
	return json.RawMessage(view), nil
}

// BlockStamp returns the height and hash of a stored block.
func (s *Store) BlockStamp(ctx context.Context, id near.BlockID) (near.BlockStamp, error) {
	where, arg := blockWhere(id)
	var h int64
	var stamp near.BlockStamp
	if err := s.pool.QueryRow(ctx, `SELECT height, hash FROM blocks WHERE `+where, arg).Scan(&h, &stamp.BlockHash); err != nil {
		return near.BlockStamp{}, notFound(err, "block "+id.String())
	}
	stamp.BlockHeight = uint64(h)
	return stamp, nil
}

// ChunkView returns the stored `chunk` result.
func (s *Store) ChunkView(ctx context.Context, chunkHash string) (json.RawMessage, error) {
	view, _, err := s.chunkView(ctx, chunkHash)
	return view, err
}

// chunkView returns a stored chunk as served and the height that included
// it.
func (s *Store) chunkView(ctx context.Context, chunkHash string) (json.RawMessage, int64, error) {
	var (
		doc    []byte
		height int64
	)
	err := s.pool.QueryRow(ctx, `SELECT doc, block_height FROM chunks WHERE chunk_hash = $1`, chunkHash).Scan(&doc, &height)
	if err != nil {
		return nil, 0, notFound(err, "chunk "+chunkHash)
	}
	view, err := s.codec.Pick(doc, []int{0})
	if err != nil {
		return nil, 0, fmt.Errorf("chunk %s: %w", chunkHash, err)
	}
	return view[0], height, nil
}

// ChunkHashAt returns the hash of the chunk block blockHeight carries for
// shardID (for a missing chunk, the older chunk it repeats).
func (s *Store) ChunkHashAt(ctx context.Context, blockHeight uint64, shardID uint64) (string, error) {
	var hash string
	err := s.pool.QueryRow(ctx, `SELECT chunk_hash FROM block_chunks WHERE block_height = $1 AND shard_id = $2`,
		int64(blockHeight), int64(shardID)).Scan(&hash)
	if err != nil {
		return "", notFound(err, fmt.Sprintf("chunk of shard %d at %d", shardID, blockHeight))
	}
	return hash, nil
}

// blockExists returns ErrNotFound when no block is stored at height.
func (s *Store) blockExists(ctx context.Context, height uint64) error {
	var one int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM blocks WHERE height = $1`, int64(height)).Scan(&one)
	if err != nil {
		return notFound(err, fmt.Sprintf("block %d", height))
	}
	return nil
}

// BlockEffects returns the block's EXPERIMENTAL_changes_in_block entries in
// upstream order.
func (s *Store) BlockEffects(ctx context.Context, height uint64) ([]near.StateChangeKindView, error) {
	if err := s.blockExists(ctx, height); err != nil {
		return nil, err
	}
	var doc []byte
	err := s.pool.QueryRow(ctx, `SELECT effects FROM block_changes WHERE block_height = $1`, int64(height)).Scan(&doc)
	effects := []near.StateChangeKindView{}
	switch {
	case errors.Is(err, pgx.ErrNoRows) || (err == nil && doc == nil):
		return effects, nil // a block without changes
	case err != nil:
		return nil, fmt.Errorf("read block effects at %d: %w", height, err)
	}
	list, err := s.codec.Pick(doc, []int{0})
	if err != nil {
		return nil, fmt.Errorf("block effects at %d: %w", height, err)
	}
	if err := json.Unmarshal(list[0], &effects); err != nil {
		return nil, fmt.Errorf("decode block effects at %d: %w", height, err)
	}
	return effects, nil
}

// StateChanges returns the block's state changes of the given types for the
// given accounts: accounts in the order asked (repeated when asked twice,
// as nearcore does), each account's changes in upstream order. Each
// change's Raw is the JSON the upstream served, so it encodes back exactly,
// with the fields and variants the typed fields do not model.
func (s *Store) StateChanges(ctx context.Context, height uint64, changeTypes []string, accountIDs []string) ([]near.StateChangeWithCauseView, error) {
	raws, err := s.StateChangesJSON(ctx, height, changeTypes, accountIDs)
	if err != nil {
		return nil, err
	}
	out := make([]near.StateChangeWithCauseView, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, fmt.Errorf("decode state change at %d: %w", height, err)
		}
		out[i].Raw = raw
	}
	return out, nil
}

// StateChangesJSON is StateChanges returning each change exactly as the
// upstream served it (fields the near types do not model included): the
// typed rows say which changes of the block's document match.
func (s *Store) StateChangesJSON(ctx context.Context, height uint64, changeTypes []string, accountIDs []string) ([]json.RawMessage, error) {
	var (
		exists   bool
		doc      []byte
		indexes  []int
		accounts []string
	)
	err := s.pool.QueryRow(ctx, stateChangesSQL, int64(height), changeTypes, accountIDs).Scan(&exists, &doc, &indexes, &accounts)
	if err != nil {
		return nil, fmt.Errorf("read state changes at %d: %w", height, err)
	}
	if !exists {
		return nil, fmt.Errorf("block %d: %w", height, ErrNotFound)
	}
	out := []json.RawMessage{}
	if len(indexes) == 0 {
		return out, nil
	}
	if doc == nil {
		return nil, fmt.Errorf("state changes at %d: rows without the block's document", height)
	}
	changes, err := s.codec.Pick(doc, indexes)
	if err != nil {
		return nil, fmt.Errorf("state changes at %d: %w", height, err)
	}
	byAccount := map[string][]json.RawMessage{}
	for i, c := range changes {
		byAccount[accounts[i]] = append(byAccount[accounts[i]], c)
	}
	for _, id := range accountIDs {
		out = append(out, byAccount[id]...)
	}
	return out, nil
}

// stateChangesSQL answers, in one round trip, whether the block exists, its
// changes document and the positions (and accounts) of the changes asked
// for, in upstream order. The document is read only when something matches.
const stateChangesSQL = `
SELECT EXISTS (SELECT 1 FROM blocks WHERE height = $1),
       CASE WHEN m.indexes IS NULL THEN NULL
            ELSE (SELECT changes FROM block_changes WHERE block_height = $1) END,
       coalesce(m.indexes, '{}'), coalesce(m.accounts, '{}')
FROM (SELECT array_agg(index_in_block ORDER BY index_in_block) AS indexes,
             array_agg(account_id ORDER BY index_in_block) AS accounts
      FROM state_changes
      WHERE block_height = $1 AND change_type::text = ANY($2) AND account_id = ANY($3)) m`

// receiptSQL and receiptToTxSQL join on the height as well as the shard or
// hash (a receipt's chunk is new in the receipt's block; an outcome's
// transaction status is at its tx_block_height): a join within one shard of
// a database distributed by height (docs/scaling.md, "A distributed PostgreSQL").
const receiptSQL = `
SELECT c.doc, r.index_in_chunk
FROM receipts r JOIN chunks c ON c.block_height = r.block_height AND c.shard_id = r.shard_id
WHERE r.receipt_id = $1
ORDER BY r.block_height LIMIT 1`

// receiptStatusSQL finds the stored transaction status that lists the
// receipt's outcome, joined on the height as receiptToTxSQL is.
const receiptStatusSQL = `
SELECT d.statuses, s.index_in_block
FROM execution_outcomes e
JOIN transaction_statuses s ON s.block_height = e.tx_block_height AND s.index_in_block = e.tx_index
JOIN block_tx_statuses d ON d.block_height = s.block_height
WHERE e.id = $1 AND e.outcome_index > 0
ORDER BY s.block_height LIMIT 1`

// Receipt returns the receipt with that id as the upstream served it in the
// first indexed chunk that carries it or, for one no chunk carries (an
// instant receipt, processed in the chunk that made it; a transaction's
// local receipt), in the `receipts` of the stored transaction status that
// lists its outcome: both are nearcore's ReceiptView of the receipt it
// stored. ErrNotFound when neither does.
func (s *Store) Receipt(ctx context.Context, receiptID string) (json.RawMessage, error) {
	var (
		doc   []byte
		index int32
	)
	err := s.pool.QueryRow(ctx, receiptSQL, receiptID).Scan(&doc, &index)
	if errors.Is(err, pgx.ErrNoRows) {
		return s.statusReceipt(ctx, receiptID)
	}
	if err != nil {
		return nil, notFound(err, "receipt "+receiptID)
	}
	receipts, err := s.receiptsOf(doc)
	if err != nil {
		return nil, fmt.Errorf("chunk of receipt %s: %w", receiptID, err)
	}
	if int(index) >= len(receipts) {
		return nil, fmt.Errorf("receipt %s: its chunk's view has no such receipt: %w", receiptID, ErrNotFound)
	}
	return receipts[index], nil
}

// receiptsOf returns the `receipts` member of a chunk's stored view.
func (s *Store) receiptsOf(doc []byte) ([]json.RawMessage, error) {
	views, err := s.codec.Pick(doc, []int{0})
	if err != nil {
		return nil, err
	}
	return receiptsMember(views[0])
}

// receiptsMember returns the items of a view's `receipts` member.
func receiptsMember(view json.RawMessage) ([]json.RawMessage, error) {
	var v struct {
		Receipts []json.RawMessage `json:"receipts"`
	}
	if err := json.Unmarshal(view, &v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return v.Receipts, nil
}

// statusReceipt returns the receipt as the stored status that lists its
// outcome lists it.
func (s *Store) statusReceipt(ctx context.Context, receiptID string) (json.RawMessage, error) {
	var (
		doc   []byte
		index int32
	)
	if err := s.pool.QueryRow(ctx, receiptStatusSQL, receiptID).Scan(&doc, &index); err != nil {
		return nil, notFound(err, "receipt "+receiptID)
	}
	stored, err := s.codec.Pick(doc, []int{int(index)})
	if err != nil {
		return nil, fmt.Errorf("status listing receipt %s: %w", receiptID, err)
	}
	receipts, err := statusReceipts(stored[0])
	if err != nil {
		return nil, fmt.Errorf("status listing receipt %s: %w", receiptID, err)
	}
	for _, raw := range receipts {
		var r struct {
			ReceiptID string `json:"receipt_id"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("decode a receipt of the status listing %s: %w", receiptID, err)
		}
		if r.ReceiptID == receiptID {
			return raw, nil
		}
	}
	return nil, fmt.Errorf("receipt %s: the status listing its outcome has no such receipt: %w", receiptID, ErrNotFound)
}

const receiptToTxSQL = `
SELECT s.tx_hash, s.signer_id
FROM execution_outcomes e JOIN transaction_statuses s ON s.block_height = e.tx_block_height AND s.index_in_block = e.tx_index
WHERE e.id = $1 AND e.outcome_index > 0
LIMIT 1`

// ReceiptTx returns the transaction whose stored status lists the outcome of
// the receipt, and its signer; ErrNotFound when no stored status does.
func (s *Store) ReceiptTx(ctx context.Context, receiptID string) (txHash, signerID string, err error) {
	if err := s.pool.QueryRow(ctx, receiptToTxSQL, receiptID).Scan(&txHash, &signerID); err != nil {
		return "", "", notFound(err, "transaction of receipt "+receiptID)
	}
	return txHash, signerID, nil
}

// txStatusSQL finds a transaction's status by hash and signer, with the
// document of the chunk that carries the transaction (a compact status
// leaves the transaction there): on a distributed archive every shard of
// the block group looks in its own index, and the documents are joined on
// the shard the status is on.
const txStatusSQL = `
SELECT s.index_in_block, d.statuses, coalesce(c.block_height, -1), coalesce(c.shard_id, -1), c.doc
FROM transaction_statuses s
JOIN block_tx_statuses d ON d.block_height = s.block_height
LEFT JOIN transactions t ON t.block_height = s.block_height AND t.hash = s.tx_hash
LEFT JOIN chunks c ON c.block_height = t.block_height AND c.shard_id = t.shard_id
WHERE s.tx_hash = $1 AND s.signer_id = $2
ORDER BY s.block_height LIMIT 1`

// TxStatus returns the stored EXPERIMENTAL_tx_status result or, with
// withReceipts false, the `tx` result: the same without its `receipts`.
func (s *Store) TxStatus(ctx context.Context, txHash, signerID string, withReceipts bool) (json.RawMessage, error) {
	var (
		index         int32
		doc, chunkDoc []byte
		chunkAt       chunkKey // when chunkDoc is set
	)
	err := s.pool.QueryRow(ctx, txStatusSQL, txHash, signerID).Scan(&index, &doc, &chunkAt.height, &chunkAt.shard, &chunkDoc)
	if err != nil {
		return nil, notFound(err, "transaction "+txHash)
	}
	stored, err := s.codec.Pick(doc, []int{int(index)})
	if err != nil {
		return nil, fmt.Errorf("status of transaction %s: %w", txHash, err)
	}
	status, err := expandStatus(stored[0], withReceipts, func(at chunkKey) (json.RawMessage, error) {
		if chunkDoc == nil || chunkAt != at {
			return nil, fmt.Errorf("the chunk of shard %d at height %d, which holds transaction %s, is not stored", at.shard, at.height, txHash)
		}
		view, err := s.codec.Pick(chunkDoc, []int{0})
		if err != nil {
			return nil, fmt.Errorf("chunk of transaction %s: %w", txHash, err)
		}
		return view[0], nil
	})
	if err != nil {
		return nil, fmt.Errorf("status of transaction %s: %w", txHash, err)
	}
	return status, nil
}
