package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/internal/packed"
	"github.com/nearline/nearline/near"
)

// A block's transaction statuses are one packed document (block_tx_statuses)
// of one value per status, in one of two forms:
//
//   - the status as served (a JSON object), as layout 3 stored every status
//     and as a status is kept when its transaction is not found byte for
//     byte in its block's chunks;
//   - a compact status (a JSON array): [skeleton, [height, shard, index]].
//     The skeleton is the status with its `transaction` replaced by 0; the
//     place names the transaction in the chunk new at that height in that
//     shard.
//
// A status is made compact only when its transaction is the chunk's, byte
// for byte; the skeleton is the status with those bytes cut out, so
// splicing them back gives the status as served: the transaction is stored
// once, in the chunk that carries it. Its receipts stay in it: they
// are in chunks of later blocks, which a batch may not hold yet, and what
// is stored must not depend on where batches end (docs/database-storage.md).

// chunkKey names a chunks row: a chunk new at block_height in shard_id.
type chunkKey struct {
	height int64
	shard  int32
}

// chunkParts are a chunk view as served and its transactions (slices of
// it), read once.
type chunkParts struct {
	view   json.RawMessage
	parsed bool
	txs    []json.RawMessage
	err    error
}

// errFound ends a walk early.
var errFound = errors.New("found")

// transactions returns the chunk view's transactions, each as served. The
// view is read up to its transactions (its receipts, after them, are not).
func (c *chunkParts) transactions() ([]json.RawMessage, error) {
	if !c.parsed {
		c.parsed = true
		err := jsonobject.Each(c.view, func(key string, value json.RawMessage) error {
			if key != "transactions" {
				return nil
			}
			var err error
			if c.txs, err = jsonobject.Items(value); err != nil {
				return err
			}
			return errFound
		})
		if !errors.Is(err, errFound) {
			c.err = errors.Join(errors.New("no transactions member"), err)
		}
	}
	return c.txs, c.err
}

// statusBlock is a block's statuses as served and their transactions'
// hashes, packed when the batch ends.
type statusBlock struct {
	height   int64
	statuses []json.RawMessage
	hashes   []string
}

// statusParts are what the compact statuses of a batch point into: its
// chunks' views, and where each transaction is.
type statusParts struct {
	chunks map[chunkKey]*chunkParts
	txs    map[txPlaceKey]txPlace
}

type txPlaceKey struct {
	height int64
	hash   string
}

type txPlace struct {
	shard, index int32
}

type chunkPlace struct {
	chunkKey
	index int32
}

func newStatusParts() statusParts {
	return statusParts{chunks: map[chunkKey]*chunkParts{}, txs: map[txPlaceKey]txPlace{}}
}

// addChunk records a chunk new at height: its view as served, and where
// its transactions are.
func (p *statusParts) addChunk(height int64, shard int32, served json.RawMessage, v *near.ChunkView) {
	key := chunkKey{height, shard}
	if _, ok := p.chunks[key]; ok {
		return // a second row of the same place is never pointed at
	}
	p.chunks[key] = &chunkParts{view: served}
	for i, tx := range v.Transactions {
		p.txs[txPlaceKey{height, tx.Hash}] = txPlace{shard, int32(i)}
	}
}

// pack returns the block's statuses document, each status compact where
// it can be.
func (p *statusParts) pack(codec *packed.Codec, b statusBlock) []byte {
	docs := make([][][]byte, len(b.statuses))
	for i, st := range b.statuses {
		docs[i] = p.compact(b.height, b.hashes[i], st)
	}
	return codec.PackPieces(docs)
}

// The pieces of a compact status around its skeleton's two sides.
var (
	compactOpen = []byte("[")
	compactHole = []byte("0")
)

// compact returns, in pieces, the status of a transaction included at
// height in its compact form when its transaction is found, byte for
// byte, in the batch's chunks; else st. The skeleton is st with the
// transaction's bytes cut out and 0 in their place, so that splicing them
// back gives st. The pieces are slices of st: it is not copied.
func (p *statusParts) compact(height int64, txHash string, st json.RawMessage) [][]byte {
	at, ok := p.txs[txPlaceKey{height, txHash}]
	if !ok {
		return [][]byte{st}
	}
	place := chunkPlace{chunkKey{height, at.shard}, at.index}
	tx, err := p.chunks[place.chunkKey].transaction(place)
	if err != nil {
		return [][]byte{st}
	}
	start, end, err := transactionValue(st)
	if err != nil || !bytes.Equal(st[start:end], tx) {
		return [][]byte{st}
	}
	tail := appendPlace(append(make([]byte, 0, 40), ','), place)
	return [][]byte{compactOpen, st[:start], compactHole, st[end:], append(tail, ']')}
}

// transactionValue returns where the value of the first `transaction`
// member of a compact JSON object starts and ends.
func transactionValue(st []byte) (start, end int, err error) {
	_, err = jsonobject.ScanObject(st, 0, func(name string, at int) (int, error) {
		e, err := jsonobject.SkipValue(st, at)
		if err != nil {
			return 0, err
		}
		if name == "transaction" {
			start, end = at, e
			return 0, errFound
		}
		return e, nil
	})
	if !errors.Is(err, errFound) {
		return 0, 0, errors.Join(errors.New("no transaction member"), err)
	}
	return start, end, nil
}

// transaction returns the transaction at a place of the chunk.
func (c *chunkParts) transaction(at chunkPlace) (json.RawMessage, error) {
	if c == nil {
		return nil, fmt.Errorf("the chunk of shard %d at height %d is not stored", at.shard, at.height)
	}
	txs, err := c.transactions()
	if err != nil {
		return nil, fmt.Errorf("chunk of shard %d at height %d: %w", at.shard, at.height, err)
	}
	if at.index < 0 || int(at.index) >= len(txs) {
		return nil, fmt.Errorf("chunk of shard %d at height %d has no transaction %d", at.shard, at.height, at.index)
	}
	return txs[at.index], nil
}

func appendPlace(dst []byte, at chunkPlace) []byte {
	dst = append(dst, '[')
	dst = strconv.AppendInt(dst, at.height, 10)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, int64(at.shard), 10)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, int64(at.index), 10)
	return append(dst, ']')
}

// expandStatus returns the status as served from a stored value of a
// block's statuses document (either form); with withReceipts false,
// without its `receipts` member (the `tx` method's answer). chunk returns
// the view of the chunk at a place, asked only for a compact status's
// transaction.
func expandStatus(stored json.RawMessage, withReceipts bool, chunk func(chunkKey) (json.RawMessage, error)) (json.RawMessage, error) {
	status := stored
	if len(stored) > 0 && stored[0] == '[' {
		skeleton, at, err := decodeCompact(stored)
		if err != nil {
			return nil, err
		}
		view, err := chunk(at.chunkKey)
		if err != nil {
			return nil, err
		}
		tx, err := (&chunkParts{view: view}).transaction(at)
		if err != nil {
			return nil, err
		}
		start, end, err := transactionValue(skeleton)
		if err != nil || string(skeleton[start:end]) != "0" {
			return nil, errors.Join(errors.New("compact status: its transaction is not left out"), err)
		}
		status = make(json.RawMessage, 0, len(skeleton)+len(tx))
		status = append(status, skeleton[:start]...)
		status = append(status, tx...)
		status = append(status, skeleton[end:]...)
	}
	if withReceipts {
		return status, nil
	}
	return jsonobject.Filter(status, func(key string) bool { return key != "receipts" })
}

// decodeCompact reads a compact status: its skeleton and its
// transaction's place.
func decodeCompact(stored json.RawMessage) (json.RawMessage, chunkPlace, error) {
	var (
		raw   []json.RawMessage
		place []int64
	)
	if err := json.Unmarshal(stored, &raw); err != nil || len(raw) != 2 {
		return nil, chunkPlace{}, errors.New("compact status: want [skeleton, transaction place]")
	}
	if err := json.Unmarshal(raw[1], &place); err != nil || len(place) != 3 {
		return nil, chunkPlace{}, errors.New("compact status: want the transaction's place as [height, shard, index]")
	}
	return raw[0], chunkPlace{chunkKey{place[0], int32(place[1])}, int32(place[2])}, nil
}

// storedParts are the stored chunk that holds the transaction of a status
// of a transaction included at height, read in one statement.
func (s *Store) storedParts(ctx context.Context, tx pgx.Tx, height int64, txHash string) (statusParts, error) {
	p := newStatusParts()
	var (
		at  txPlace
		doc []byte
	)
	err := tx.QueryRow(ctx, `SELECT t.shard_id, t.index_in_chunk, c.doc
		FROM transactions t JOIN chunks c ON c.block_height = t.block_height AND c.shard_id = t.shard_id
		WHERE t.hash = $1 AND t.block_height = $2 LIMIT 1`, txHash, height).Scan(&at.shard, &at.index, &doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, nil // kept as served
	}
	if err != nil {
		return p, fmt.Errorf("transaction %s: %w", txHash, err)
	}
	view, err := s.codec.Pick(doc, []int{0})
	if err != nil {
		return p, fmt.Errorf("chunk of transaction %s: %w", txHash, err)
	}
	p.txs[txPlaceKey{height, txHash}] = at
	p.chunks[chunkKey{height, at.shard}] = &chunkParts{view: view[0]}
	return p, nil
}

// statusReceipts returns the receipts a stored status lists (a compact
// status keeps them in its skeleton).
func statusReceipts(stored json.RawMessage) ([]json.RawMessage, error) {
	if len(stored) > 0 && stored[0] == '[' {
		skeleton, _, err := decodeCompact(stored)
		if err != nil {
			return nil, err
		}
		stored = skeleton
	}
	return receiptsMember(stored)
}
