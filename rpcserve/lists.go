package rpcserve

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/near"
)

// errBatchFull ends a batch scan at Config.MaxBatch + 1 items.
var errBatchFull = errors.New("batch holds more items than the limit")

var errNotJSON = errors.New("not valid JSON")

// batch is what scanBatch found in a JSON array body.
type batch struct {
	items     []json.RawMessage // the first MaxBatch + 1 at most
	over      bool              // the array holds more than MaxBatch items
	hasObject bool              // an item seen is an object
}

// scanBatch walks a JSON array body, keeping at most limit + 1 of its
// items, so a body of millions of items never becomes a list of them. A
// batch is refused once it passes the limit; with the method in the path
// an array holding no object is positional params instead, so there the
// walk goes on, keeping nothing more, until an object is seen.
func scanBatch(body []byte, limit int, pathMethod string) (batch, error) {
	var b batch
	count := 0
	err := jsonobject.EachItem(body, func(item json.RawMessage) error {
		count++
		b.hasObject = b.hasObject || isObject(item)
		if count <= limit {
			b.items = append(b.items, item)
			return nil
		}
		b.over = true
		if pathMethod == "" || b.hasObject {
			return errBatchFull
		}
		return nil
	})
	if errors.Is(err, errBatchFull) {
		// The rest is not kept, but a body that is not JSON is still
		// answered as such.
		if !json.Valid(body) {
			return b, errNotJSON
		}
		return b, nil
	}
	return b, err
}

// maxTrackedDepth is how deep longList counts arrays: the params Nearline
// reads into lists (account_ids, keys, positional params) are at most a
// few levels down; deeper arrays are only skipped by the decoders.
const maxTrackedDepth = 32

// longList reports whether the JSON text raw (already valid) holds an array
// of more than limit items within maxTrackedDepth levels. It scans raw once
// and allocates nothing.
func longList(raw []byte, limit int) bool {
	var commas [maxTrackedDepth]int
	var isArray [maxTrackedDepth]bool
	depth := -1
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
			if depth < maxTrackedDepth {
				commas[depth], isArray[depth] = 0, raw[i] == '['
			}
		case ']', '}':
			depth--
		case ',':
			if depth >= 0 && depth < maxTrackedDepth && isArray[depth] {
				// An array of n items holds n-1 commas.
				if commas[depth]++; commas[depth] >= limit {
					return true
				}
			}
		}
	}
	return false
}

// listTooLong is the error of params holding a list longer than
// Config.MaxListItems (account_ids, keys, positional params).
func listTooLong(limit int) *near.Error {
	return near.ParseError(fmt.Sprintf("Failed parsing args: a list in the params holds more than %d items, the server's limit", limit))
}
