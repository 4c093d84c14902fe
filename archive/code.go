package archive

import "sync"

// codeCache keeps recently used contract code by code hash, so a view call
// does not read a contract's bytes from Postgres each time. Code for a hash
// never changes; the oldest entry is evicted first.
type codeCache struct {
	mu     sync.Mutex
	max    int
	byHash map[string][]byte
	order  []string
}

func newCodeCache(max int) *codeCache {
	return &codeCache{max: max, byHash: map[string][]byte{}}
}

func (c *codeCache) get(hash string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	code, ok := c.byHash[hash]
	return code, ok
}

func (c *codeCache) put(hash string, code []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byHash[hash]; ok || c.max <= 0 {
		return
	}
	if len(c.order) >= c.max {
		delete(c.byHash, c.order[0])
		c.order = c.order[1:]
	}
	c.byHash[hash] = code
	c.order = append(c.order, hash)
}
