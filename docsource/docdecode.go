package docsource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nearline/nearline/internal/jsonobject"
)

// decodeDocument takes a document apart in one scan, compacted (once, when
// it did not come compact); a body without a block is malformed. Member
// names are matched exactly; unknown members are passed over.
func decodeDocument(body []byte) (*BlockDocument, error) {
	body = bytes.TrimSpace(body)
	doc, err := splitDocument(body)
	if errors.Is(err, jsonobject.ErrNotCompact) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, body); err != nil {
			return nil, fmt.Errorf("decode block document: %w", err)
		}
		doc, err = splitDocument(buf.Bytes())
	}
	if err != nil {
		return nil, fmt.Errorf("decode block document: %w", err)
	}
	if len(doc.Block) == 0 || string(doc.Block) == "null" {
		return nil, errors.New("block document without a block")
	}
	return doc, nil
}

func splitDocument(b []byte) (*BlockDocument, error) {
	var doc BlockDocument
	end, err := jsonobject.ScanObject(b, 0, func(name string, at int) (int, error) {
		switch name {
		case "block":
			return rawValue(b, at, &doc.Block)
		case "shards":
			return scanList(b, at, &doc.Shards, func(at int) (DocumentShard, int, error) {
				var sh DocumentShard
				end, _, err := scanShard(b, at, &sh)
				return sh, end, err
			})
		}
		return jsonobject.SkipValue(b, at)
	})
	if err != nil {
		return nil, err
	}
	return &doc, jsonobject.Trailing(b, end)
}

// scanList takes the array at b[at] apart into *list, each item by item
// (which returns it and the offset past it; an item is kept even when its
// scan fails); null leaves *list nil, [] makes it empty, not nil.
func scanList[T any](b []byte, at int, list *[]T, item func(at int) (T, int, error)) (int, error) {
	*list = nil
	if isNull(b, at) {
		return at + 4, nil
	}
	*list = []T{}
	return jsonobject.ScanArray(b, at, func(at int) (int, error) {
		v, end, err := item(at)
		*list = append(*list, v)
		return end, err
	})
}

// isNull reports whether the value at b[at] is null.
func isNull(b []byte, at int) bool {
	return len(b)-at >= 4 && string(b[at:at+4]) == "null"
}

// decodeShard takes a Lake shard file apart; hasID says whether it named
// its shard_id.
func decodeShard(raw json.RawMessage) (sh DocumentShard, hasID bool, err error) {
	end, hasID, err := scanShard(raw, 0, &sh)
	if err != nil {
		return sh, hasID, err
	}
	return sh, hasID, jsonobject.Trailing(raw, end)
}

// scanShard takes the shard's part at b[at] apart (a document's shards
// item, a Lake shard file) into sh; hasID says whether it named its
// shard_id.
func scanShard(b []byte, at int, sh *DocumentShard) (end int, hasID bool, err error) {
	if isNull(b, at) {
		return at + 4, false, nil
	}
	end, err = jsonobject.ScanObject(b, at, func(name string, at int) (int, error) {
		switch name {
		case "shard_id":
			var v json.RawMessage
			end, err := rawValue(b, at, &v)
			if err != nil || string(v) == "null" {
				sh.ShardID, hasID = 0, false
				return end, err
			}
			if sh.ShardID, err = strconv.ParseUint(string(v), 10, 64); err != nil {
				return 0, fmt.Errorf("shard_id %s: not a u64", v)
			}
			hasID = true
			return end, nil
		case "chunk":
			end, c, err := scanChunk(b, at)
			if err == nil {
				sh.Chunk, sh.chunk = b[at:end], c
			}
			return end, err
		case "receipt_execution_outcomes":
			return scanList(b, at, &sh.ReceiptExecutionOutcomes, func(at int) (DocumentReceiptOutcome, int, error) {
				var ro DocumentReceiptOutcome
				end, err := scanReceiptOutcome(b, at, &ro)
				return ro, end, err
			})
		case "state_changes":
			return scanList(b, at, &sh.StateChanges, func(at int) (json.RawMessage, int, error) {
				var v json.RawMessage
				end, err := rawValue(b, at, &v)
				return v, end, err
			})
		}
		return jsonobject.SkipValue(b, at)
	})
	return end, hasID, err
}

func scanReceiptOutcome(b []byte, at int, ro *DocumentReceiptOutcome) (int, error) {
	if isNull(b, at) {
		return at + 4, nil
	}
	return jsonobject.ScanObject(b, at, func(name string, at int) (int, error) {
		switch name {
		case "execution_outcome":
			return rawValue(b, at, &ro.ExecutionOutcome)
		case "receipt":
			return rawValue(b, at, &ro.Receipt)
		case "tx_hash":
			var v json.RawMessage
			end, err := rawValue(b, at, &v)
			ro.TxHash = nil
			if err != nil || string(v) == "null" {
				return end, err
			}
			if v[0] != '"' {
				return 0, fmt.Errorf("tx_hash %s: not a string", v)
			}
			h, err := jsonobject.Unquote(v)
			ro.TxHash = &h
			return end, err
		}
		return jsonobject.SkipValue(b, at)
	})
}

// rawValue passes the value at b[at] and keeps it in *v.
func rawValue(b []byte, at int, v *json.RawMessage) (int, error) {
	end, err := jsonobject.SkipValue(b, at)
	if err == nil {
		*v = b[at:end]
	}
	return end, err
}

// chunkScan is a document's chunk as its scan found it: its members in
// order, as jsonobject.Members gives them, and for each transactions
// member that is an array of objects, each item's transaction and
// execution outcome (txs; nil for any other member, or one of another
// shape, which parseChunk takes apart itself).
type chunkScan struct {
	members []jsonobject.Member
	txs     [][]scannedTx
}

// scannedTx is an item of a chunk's transactions: the last value of its
// transaction member and of its outcome's execution_outcome member, nil
// when it has none, outcome null when its outcome is.
type scannedTx struct {
	tx, outcome, executed json.RawMessage
}

// scanChunk passes the chunk at b[at], taking it apart as parseChunk
// reads it, in the one scan that validates it; a chunk that is not an
// object is passed over (nil), for parseChunk's error.
func scanChunk(b []byte, at int) (int, *chunkScan, error) {
	if at >= len(b) || b[at] != '{' {
		end, err := jsonobject.SkipValue(b, at)
		return end, nil, err
	}
	c := &chunkScan{}
	end, err := jsonobject.ScanMembers(b, at, func(key []byte, name string, at int) (int, error) {
		var txs []scannedTx
		var end int
		var err error
		if name == "transactions" {
			end, txs, err = scanChunkTransactions(b, at)
		} else {
			end, err = jsonobject.SkipValue(b, at)
		}
		if err != nil {
			return 0, err
		}
		c.members = append(c.members, jsonobject.Member{Key: name, RawKey: key, Value: b[at:end]})
		c.txs = append(c.txs, txs)
		return end, nil
	})
	return end, c, err
}

// scanChunkTransactions passes a chunk's transactions at b[at]: txs is nil
// unless it is an array of objects whose outcomes are objects or null.
func scanChunkTransactions(b []byte, at int) (int, []scannedTx, error) {
	if at >= len(b) || b[at] != '[' {
		end, err := jsonobject.SkipValue(b, at)
		return end, nil, err
	}
	txs, shaped := []scannedTx{}, true
	end, err := jsonobject.ScanArray(b, at, func(at int) (int, error) {
		if at >= len(b) || b[at] != '{' {
			shaped = false
			return jsonobject.SkipValue(b, at)
		}
		var t scannedTx
		end, err := jsonobject.ScanObject(b, at, func(name string, at int) (int, error) {
			switch name {
			case "transaction":
				return rawValue(b, at, &t.tx)
			case "outcome":
				t.executed = nil // the last outcome's, as the last member wins
				if at >= len(b) || b[at] != '{' {
					end, err := rawValue(b, at, &t.outcome)
					shaped = shaped && string(t.outcome) == "null"
					return end, err
				}
				end, err := jsonobject.ScanObject(b, at, func(name string, at int) (int, error) {
					if name == "execution_outcome" {
						return rawValue(b, at, &t.executed)
					}
					return jsonobject.SkipValue(b, at)
				})
				if err != nil {
					return 0, err
				}
				t.outcome = b[at:end]
				return end, nil
			}
			return jsonobject.SkipValue(b, at)
		})
		txs = append(txs, t)
		return end, err
	})
	if !shaped {
		txs = nil
	}
	return end, txs, err
}
