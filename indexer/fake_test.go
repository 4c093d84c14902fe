package indexer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// fakeSource serves a storetest.Chain, up to a head the test moves.
type fakeSource struct {
	chain   *storetest.Chain
	head    atomic.Uint64
	polls   atomic.Int64  // FinalHead calls
	latency time.Duration // up to this much random delay per bundle

	mu       sync.Mutex
	override map[uint64]bundle.Bundle // replaces the chain's bundle at a height
	fetches  map[uint64]int
	floors   []uint64 // what each Prepare was told
}

var _ indexer.Source = (*fakeSource)(nil)

func (s *fakeSource) Prepare(chunkFloor uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.floors = append(s.floors, chunkFloor)
}

// TxStatus answers as an upstream that no longer has the transaction: the
// chain's statuses are all FINAL when served, so none is revisited.
func (s *fakeSource) TxStatus(_ context.Context, ref bundle.TxRef) (bundle.TxStatus, bool, error) {
	return bundle.TxStatus{}, false, near.UnknownTransaction(ref.TxHash)
}

func newFakeSource(c *storetest.Chain, head uint64) *fakeSource {
	s := &fakeSource{chain: c, override: map[uint64]bundle.Bundle{}, fetches: map[uint64]int{}}
	s.head.Store(head)
	return s
}

// newFakeRun is what most indexer tests start from: testChain's chain, a
// fakeSource serving it up to head, and a fresh store.
func newFakeRun(t *testing.T, head uint64) (*storetest.Chain, *fakeSource, *store.Store) {
	t.Helper()
	c := testChain()
	return c, newFakeSource(c, head), storetest.NewStore(t)
}

func (s *fakeSource) FinalHead(context.Context) (uint64, error) {
	s.polls.Add(1)
	return s.head.Load(), nil
}

func (s *fakeSource) GenesisConfig(context.Context) (json.RawMessage, error) {
	return json.RawMessage(`{"chain_id":"fake","genesis_height":1}`), nil
}

func (s *fakeSource) Bundle(ctx context.Context, height uint64) (*bundle.Bundle, error) {
	if s.latency > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(rand.Int64N(int64(s.latency)))):
		}
	}
	if height > s.head.Load() {
		return nil, fmt.Errorf("fake source: height %d above head %d", height, s.head.Load())
	}
	s.mu.Lock()
	s.fetches[height]++
	b, ok := s.override[height]
	s.mu.Unlock()
	if !ok {
		b, ok = s.chain.Bundle(height)
	}
	if !ok {
		return nil, fmt.Errorf("fake: %w", bundle.ErrNoBlock)
	}
	return &b, nil
}

// digest returns a checksum of every table but the cursor, whose range
// starts where each run's did.
func digest(t *testing.T, s *store.Store) map[string]storetest.Sum {
	t.Helper()
	return storetest.TableSums(t, s.Pool(), "indexer_cursor")
}

// reference indexes the whole chain in one uninterrupted run.
func reference(t *testing.T, c *storetest.Chain, from, to uint64) map[string]storetest.Sum {
	t.Helper()
	s := storetest.NewStore(t)
	src := newFakeSource(c, to+5)
	ix, err := indexer.New(indexer.Config{From: &from, To: &to, BatchSize: 1000}, src, s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(context.Background()))
	return digest(t, s)
}

func ptr(v uint64) *uint64 { return &v }
