package nearvm

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// Linear memory reuse. A contract's memory is a megabyte or more (17 pages
// for Rust contracts, grown by its allocator), and allocating, zeroing and
// regrowing it dominated a warm call. memoryPool keeps the buffers of
// finished calls: a buffer keeps its capacity between calls, grows in
// place, and only the part a previous call dirtied is zeroed again. The
// pool is bounded: at most maxPooledBytes of idle buffers, none larger than
// maxPooledCapacity; the rest go back to the GC.
const (
	minPooledCapacity = 4 << 20  // first capacity of a new buffer
	maxPooledCapacity = 16 << 20 // larger buffers go back to the GC
	maxPooledBytes    = 32 << 20 // the most idle capacity the pool keeps
)

type memoryPool struct {
	mu    sync.Mutex
	idle  []*pooledMemory
	bytes int // capacity of the idle buffers
}

var _ experimental.MemoryAllocator = (*memoryPool)(nil)

// Allocate implements experimental.MemoryAllocator.
func (p *memoryPool) Allocate(_, maxBytes uint64) experimental.LinearMemory {
	p.mu.Lock()
	var m *pooledMemory
	if n := len(p.idle); n > 0 {
		m, p.idle = p.idle[n-1], p.idle[:n-1]
		p.bytes -= cap(m.buf)
	}
	p.mu.Unlock()
	if m == nil {
		m = &pooledMemory{pool: p}
	}
	m.max = maxBytes
	m.buf = m.buf[:0]
	return m
}

// idleBytes reports the capacity of the buffers the pool keeps.
func (p *memoryPool) idleBytes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bytes
}

// pooledMemory is one linear memory. Bytes of buf beyond len(buf) up to
// dirty may hold data of an earlier call; beyond dirty they are zero.
type pooledMemory struct {
	pool  *memoryPool
	buf   []byte
	dirty int
	max   uint64
}

// Reallocate implements experimental.LinearMemory: it returns the memory
// resized to size bytes, the new part zeroed, or nil beyond the maximum.
func (m *pooledMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	n := int(size)
	if n <= cap(m.buf) {
		if end := min(n, m.dirty); end > len(m.buf) {
			clear(m.buf[len(m.buf):end])
		}
		m.buf = m.buf[:n]
		m.dirty = max(m.dirty, n)
		return m.buf
	}
	capacity := uint64(max(n, 2*cap(m.buf), minPooledCapacity))
	capacity = min(capacity, max(m.max, size))
	grown := make([]byte, n, capacity)
	copy(grown, m.buf)
	m.buf = grown
	m.dirty = n
	return m.buf
}

// Free implements experimental.LinearMemory: the buffer goes back to the
// pool while the pool has room for it, and to the GC otherwise.
func (m *pooledMemory) Free() {
	p := m.pool
	if cap(m.buf) > maxPooledCapacity {
		return
	}
	m.buf = m.buf[:0]
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+cap(m.buf) > maxPooledBytes {
		return
	}
	p.idle = append(p.idle, m)
	p.bytes += cap(m.buf)
}
