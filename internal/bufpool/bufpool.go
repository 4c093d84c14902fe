// Package bufpool keeps large byte buffers for reuse. A block document's
// response body is ~1.7 MB on mainnet: read into a fresh buffer, its
// bytes are cleared and its pages faulted in once more every block, which
// a buffer used before (resident, and written over as it is read into)
// does not cost.
//
// Whoever holds a buffer from Get owns it until it is Put back; nothing
// may read it after that. The Pool cannot tell: a buffer Put while a
// slice of it is still read is a wrong answer, not a crash. Tests make
// such a use show with NewPoisoned.
package bufpool

import (
	"slices"
	"sync"
)

// MinSize is the smallest buffer a Pool keeps: smaller ones cost little
// to allocate, and would take the place of the large ones it is for.
const MinSize = 64 << 10

// PoisonByte is what a poisoned Pool writes over each buffer Put back.
const PoisonByte = 0xA5

// Pool keeps buffers of at least MinSize bytes, up to a total capacity,
// and hands back the last Put first. It is safe for concurrent use; a nil
// *Pool allocates every buffer and keeps none.
type Pool struct {
	mu     sync.Mutex
	free   [][]byte
	held   int // the capacities of free, summed
	limit  int
	poison bool
}

// New returns a Pool keeping buffers of up to limit bytes in all.
func New(limit int) *Pool { return &Pool{limit: limit} }

// NewPoisoned returns New(limit) that writes PoisonByte over every buffer
// Put back before it keeps it: a slice of it read after the Put reads
// that instead of what was there (tests).
func NewPoisoned(limit int) *Pool { return &Pool{limit: limit, poison: true} }

// Get returns an empty buffer with room for at least n bytes: the last
// one Put that has the room, else a new one with an eighth more (the next
// document is a little larger as often as not).
func (p *Pool) Get(n int) []byte {
	if p != nil && n <= p.limit {
		p.mu.Lock()
		for i := len(p.free) - 1; i >= 0; i-- {
			if b := p.free[i]; cap(b) >= n {
				p.free = slices.Delete(p.free, i, i+1)
				p.held -= cap(b)
				p.mu.Unlock()
				return b[:0]
			}
		}
		p.mu.Unlock()
	}
	return make([]byte, 0, n+n/8)
}

// Put gives b back for reuse. A buffer smaller than MinSize is dropped;
// so are the oldest kept when b would take the Pool past its limit (b too,
// when it alone does).
func (p *Pool) Put(b []byte) {
	if p == nil || cap(b) < MinSize || cap(b) > p.limit {
		return
	}
	b = b[:cap(b)]
	if p.poison {
		for i := range b {
			b[i] = PoisonByte
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.free) > 0 && p.held+cap(b) > p.limit {
		p.held -= cap(p.free[0])
		p.free[0] = nil
		p.free = p.free[1:]
	}
	p.free = append(p.free, b[:0])
	p.held += cap(b)
}
