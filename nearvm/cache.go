package nearvm

import (
	"container/list"
	"context"
	"sync"

	"github.com/tetratelabs/wazero"
)

// compiledContract is one cache entry: a contract compiled by wazero, or the
// CompilationError it produced (cached too, so a bad contract is not
// recompiled on every call).
type compiledContract struct {
	key      string
	compiled wazero.CompiledModule // nil when compileErr is set
	exports  map[string]funcType
	// compileErr and linkErr are the contract's permanent errors.
	compileErr *FunctionCallError
	linkErr    *FunctionCallError

	// Guarded by moduleCache.mu.
	refs    int
	evicted bool
	elem    *list.Element
}

// moduleCache is an LRU of compiled contracts. Entries in use by a call are
// reference counted, so eviction never closes a module a call is
// instantiating; the last release closes it.
type moduleCache struct {
	mu      sync.Mutex
	size    int
	entries map[string]*compiledContract
	order   *list.List // front = most recently used
}

func newModuleCache(size int) *moduleCache {
	return &moduleCache{size: size, entries: map[string]*compiledContract{}, order: list.New()}
}

// acquire returns the entry for key with one more reference, or nil.
func (c *moduleCache) acquire(key string) *compiledContract {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil {
		return nil
	}
	c.order.MoveToFront(e.elem)
	e.refs++
	return e
}

// add inserts e with one reference for the caller and evicts the
// least recently used entries beyond the size. It returns the entry that is
// cached under e.key, which is e unless another caller got there first (then
// e is closed and the existing entry returned with a reference). Callers that
// share e through singleflight may all add it; each gets its own reference.
func (c *moduleCache) add(ctx context.Context, e *compiledContract) *compiledContract {
	c.mu.Lock()
	if e.evicted {
		// Shared through singleflight and already evicted and closed by the
		// time this caller got here: the caller compiles again.
		c.mu.Unlock()
		return nil
	}
	if existing := c.entries[e.key]; existing != nil {
		existing.refs++
		c.order.MoveToFront(existing.elem)
		c.mu.Unlock()
		if existing != e {
			closeCompiled(ctx, e)
		}
		return existing
	}
	e.refs++
	e.elem = c.order.PushFront(e)
	c.entries[e.key] = e
	var toClose []*compiledContract
	for c.order.Len() > c.size {
		old := c.order.Remove(c.order.Back()).(*compiledContract)
		delete(c.entries, old.key)
		old.evicted = true
		if old.refs == 0 {
			toClose = append(toClose, old)
		}
	}
	c.mu.Unlock()
	for _, old := range toClose {
		closeCompiled(ctx, old)
	}
	return e
}

// release drops a reference taken by acquire or add.
func (c *moduleCache) release(ctx context.Context, e *compiledContract) {
	c.mu.Lock()
	e.refs--
	closeNow := e.evicted && e.refs == 0
	c.mu.Unlock()
	if closeNow {
		closeCompiled(ctx, e)
	}
}

// len reports the number of cached contracts.
func (c *moduleCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func closeCompiled(ctx context.Context, e *compiledContract) {
	if e.compiled != nil {
		_ = e.compiled.Close(context.WithoutCancel(ctx))
	}
}
