package docsource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	gojson "github.com/goccy/go-json"
)

// unmarshal decodes a part of a document into its type. goccy/go-json
// decodes as encoding/json does (the same struct tags, json.RawMessage,
// Unmarshaler methods, case-insensitive member names for typed fields, as
// the RPC source's decoding has them) at about twice its speed on the
// real mainnet document's views (BenchmarkDecodeRealDocument); the
// document's own structure is taken apart by the exact scan of
// jsonscan.go, so only typed views go through it.
func unmarshal(data []byte, v any) error {
	return gojson.Unmarshal(data, v)
}

// decodeDocument takes a document apart in one scan, compacted (once, when
// it did not come compact); a body without a block is malformed. Member
// names are matched exactly; unknown members are passed over.
func decodeDocument(body []byte) (*BlockDocument, error) {
	body = bytes.TrimSpace(body)
	ms, err := members(body)
	if errors.Is(err, errNotCompact) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, body); err != nil {
			return nil, fmt.Errorf("decode block document: %w", err)
		}
		ms, err = members(buf.Bytes())
	}
	if err != nil {
		return nil, fmt.Errorf("decode block document: %w", err)
	}
	var doc BlockDocument
	for _, m := range ms {
		switch m.key {
		case "block":
			doc.Block = m.value
		case "shards":
			if doc.Shards, err = decodeShards(m.value); err != nil {
				return nil, fmt.Errorf("decode block document: %w", err)
			}
		}
	}
	if len(doc.Block) == 0 || string(doc.Block) == "null" {
		return nil, errors.New("block document without a block")
	}
	return &doc, nil
}

func decodeShards(raw json.RawMessage) ([]DocumentShard, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	list, err := items(raw)
	if err != nil {
		return nil, err
	}
	shards := make([]DocumentShard, len(list))
	for i, it := range list {
		if shards[i], _, err = decodeShard(it); err != nil {
			return nil, fmt.Errorf("shard %d: %w", i, err)
		}
	}
	return shards, nil
}

// decodeShard takes a shard's part apart (a document's shards item, a Lake
// shard file); hasID says whether it named its shard_id.
func decodeShard(raw json.RawMessage) (sh DocumentShard, hasID bool, err error) {
	if string(raw) == "null" {
		return sh, false, nil
	}
	ms, err := members(raw)
	if err != nil {
		return sh, false, err
	}
	for _, m := range ms {
		switch m.key {
		case "shard_id":
			if string(m.value) == "null" {
				sh.ShardID, hasID = 0, false
				continue
			}
			if sh.ShardID, err = strconv.ParseUint(string(m.value), 10, 64); err != nil {
				return sh, false, fmt.Errorf("shard_id %s: not a u64", m.value)
			}
			hasID = true
		case "chunk":
			sh.Chunk = m.value
		case "receipt_execution_outcomes":
			sh.ReceiptExecutionOutcomes = nil
			if string(m.value) == "null" {
				continue
			}
			list, err := items(m.value)
			if err != nil {
				return sh, false, err
			}
			sh.ReceiptExecutionOutcomes = make([]DocumentReceiptOutcome, len(list))
			for i, it := range list {
				if sh.ReceiptExecutionOutcomes[i], err = decodeReceiptOutcome(it); err != nil {
					return sh, false, fmt.Errorf("receipt execution outcome %d: %w", i, err)
				}
			}
		case "state_changes":
			sh.StateChanges = nil
			if string(m.value) == "null" {
				continue
			}
			if sh.StateChanges, err = items(m.value); err != nil {
				return sh, false, err
			}
		}
	}
	return sh, hasID, nil
}

func decodeReceiptOutcome(raw json.RawMessage) (DocumentReceiptOutcome, error) {
	var ro DocumentReceiptOutcome
	if string(raw) == "null" {
		return ro, nil
	}
	ms, err := members(raw)
	if err != nil {
		return ro, err
	}
	for _, m := range ms {
		switch m.key {
		case "execution_outcome":
			ro.ExecutionOutcome = m.value
		case "receipt":
			ro.Receipt = m.value
		case "tx_hash":
			ro.TxHash = nil
			if string(m.value) != "null" {
				if m.value[0] != '"' {
					return ro, fmt.Errorf("tx_hash %s: not a string", m.value)
				}
				h := keyName(m.value)
				ro.TxHash = &h
			}
		}
	}
	return ro, nil
}
