package bundle

import "time"

// What a sink (the store) and the indexer say to each other, so that a
// sink other than the store needs nothing of it.

// Range is one cursor's indexed heights.
type Range struct {
	Cursor string
	// First is the lowest height the range covers (a block or a skipped
	// height).
	First uint64
	// Last is the range's newest block.
	Last    Cursor
	Updated time.Time
}

// Covers reports whether height is in r.
func (r Range) Covers(height uint64) bool { return r.First <= height && height <= r.Last.Height }

// Link is where heights from some start join the range below them.
type Link struct {
	// Block is the block the first block at or above start must link to.
	Block Cursor
	// RangeFirst is the first height of the range holding Block: every
	// chunk included from there to Block is stored.
	RangeFirst uint64
}

// Cursor is a committed block: the indexer resumes after it.
type Cursor struct {
	Height uint64
	Hash   string
}

// CommitStats says what one Commit wrote.
type CommitStats struct {
	Blocks int
	Rows   int
	// MalformedEventLogs counts the EVENT_JSON logs of the token standards
	// skipped because they do not follow their standard (each is logged).
	MalformedEventLogs int
	// Unknown counts what the batch held that Nearline stores as it came
	// but does not model, by kind (e.g. "state_change:gas_key_nonce_update",
	// "access_key_permission:GasKeyFullAccess"): nothing of it stopped the
	// commit.
	Unknown map[string]int
}

// A Batch is bundles (ascending heights) a sink's Prepare made ready for
// its Write: the CPU work (encoding rows, packing documents) is done
// without the database, so a batch can be prepared while the one before
// it is written.
type Batch struct {
	Bundles []Bundle
	// Prepared is what the sink's Prepare made of Bundles, for its Write
	// alone (the store's rows); nil for a sink that needs nothing.
	Prepared any
}
