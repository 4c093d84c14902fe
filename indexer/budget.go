package indexer

import (
	"sync"

	"github.com/nearline/nearline/bundle"
)

// budget bounds, in bytes, what the pipeline holds: the blocks being
// fetched (their documents or answers), fetched and decoded bundles waiting
// to be linked, batches prepared into rows and the batch being written.
// A height's fetch reserves the weight of an average block before it
// starts; once its bundle is in hand the reservation becomes the bundle's
// weight, which is held until its batch is written. A batch is cut short
// when the budget is spent and none of its fetches is still running (and
// handed on, so that what it holds can be written and released), and once
// it holds half the budget (its blocks' weight and its running fetches'
// reservations), so that the next batch is fetched while one is prepared
// and written (a third made batches of about 7 mainnet blocks, and their
// commits cost PostgreSQL 2 ms a block more).
type budget struct {
	limit int64

	mu   sync.Mutex
	used int64
	peak int64
	// avg is the running average weight of a block, what a fetch reserves;
	// weighed says whether a block was weighed yet (until then one fetch
	// runs at a time: a first wave of Workers fetches of blocks of unknown
	// weight could hold many times the budget).
	avg     int64
	weighed bool
	// freed is closed and replaced each time bytes are released.
	freed chan struct{}
}

// newBudget returns a budget of limit bytes for workers fetches at once.
// The first fetch reserves an equal share of the budget per worker.
func newBudget(limit int64, workers int) *budget {
	return &budget{limit: limit, avg: max(limit/int64(workers), 1), freed: make(chan struct{})}
}

// tryReserve takes the average block's weight for a fetch when it fits
// (or nothing is held: one block always fits); when it does not, freed is
// closed the next time bytes are released or a fetch settles.
func (b *budget) tryReserve() (n int64, ok bool, freed <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n = b.avg
	if b.used == 0 || b.weighed && b.used+n <= b.limit {
		b.take(n)
		return n, true, nil
	}
	return 0, false, b.freed
}

// settle replaces a fetch's reservation by the weight of what it fetched
// (0 for a height without a block), and learns the average from it.
func (b *budget) settle(reserved, weight int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case weight > 0 && !b.weighed:
		b.avg, b.weighed = weight, true
	case weight > b.avg: // heavier blocks: learn at once
		b.avg += (weight - b.avg) / 2
	case weight > 0:
		b.avg += (weight - b.avg) / 8
	}
	b.avg = max(b.avg, 1)
	b.take(weight - reserved)
	b.wake()
}

// release returns n bytes.
func (b *budget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.take(-n)
	b.wake()
	b.mu.Unlock()
}

func (b *budget) take(n int64) {
	b.used += n
	b.peak = max(b.peak, b.used)
}

func (b *budget) wake() {
	close(b.freed)
	b.freed = make(chan struct{})
}

// usage returns the bytes held, the most held so far and the limit.
func (b *budget) usage() (used, peak, limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.peak, b.limit
}

// batchShare is the most one batch may weigh: half the budget.
func (b *budget) batchShare() int64 { return max(b.limit/2, 1) }

// bundleWeight estimates the memory a bundle holds from its parts as
// served (each kept as it came and decoded into its view), with the rows
// prepared from it: weightPerByte times their bytes.
func bundleWeight(b *bundle.Bundle) int64 {
	n := len(b.BlockJSON)
	for _, c := range b.Chunks {
		n += len(c.JSON)
	}
	for _, c := range b.OlderChunks {
		n += len(c.JSON)
	}
	for _, c := range b.Changes {
		n += len(c.JSON)
	}
	for _, s := range b.TxStatuses {
		n += len(s.JSON)
	}
	if b.ProtocolConfig != nil {
		n += len(b.ProtocolConfig.JSON)
	}
	return int64(n) * weightPerByte
}

// weightPerByte is the memory held per byte of a bundle's JSON: the raw
// parts, their decoded views, the document they were cut from and the
// prepared rows. TestBundleWeightCoversWhatABlockHolds measures it on the
// bench's real chain (copies of mainnet block 151,768,255 made into
// Bundles by docsource.Source and into rows by store.Prepare): a block's
// 1,601,571 bytes of JSON hold 7.72 MB of live heap, 4.82 per byte (6.28
// MB the bundle, 1.44 MB its rows), so 6 counts 1.24 times what a block
// holds; fetching and preparing it allocates 19 per byte on the way, which
// the garbage collector returns. On the real mainnet chain (go run ./bench
// --only real) the default 192 MiB budget keeps the indexer's max RSS at
// 442-453 MiB (docs/performance-ingest.md).
const weightPerByte = 6
