package nearvm

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMemoryPoolIsBounded(t *testing.T) {
	t.Parallel()
	p := &memoryPool{}
	const pages = 64 << 10
	var mems []*pooledMemory
	for range 10 {
		m := p.Allocate(0, 2048*pages).(*pooledMemory)
		require.Len(t, m.Reallocate(8<<20), 8<<20)
		mems = append(mems, m)
	}
	big := p.Allocate(0, 2048*pages).(*pooledMemory)
	require.Len(t, big.Reallocate(maxPooledCapacity+1), maxPooledCapacity+1)
	big.Free()
	require.Zero(t, p.idleBytes(), "a buffer above maxPooledCapacity goes back to the GC")
	for _, m := range mems {
		m.Free()
	}
	require.LessOrEqual(t, p.idleBytes(), maxPooledBytes)
	require.Positive(t, p.idleBytes())

	// A pooled buffer comes back empty, and what a call wrote is zero to the
	// next one.
	m := p.Allocate(0, 2048*pages).(*pooledMemory)
	buf := m.Reallocate(pages)
	buf[10] = 7
	m.Free()
	m = p.Allocate(0, 2048*pages).(*pooledMemory)
	require.Zero(t, m.Reallocate(pages)[10])
	require.Nil(t, m.Reallocate(2049*pages), "beyond the maximum")
}

// blockedStorage holds every read until release is closed.
type blockedStorage struct {
	reading chan struct{}
	release chan struct{}
}

func (s *blockedStorage) Get(ctx context.Context, _ []byte) ([]byte, bool, error) {
	s.reading <- struct{}{}
	select {
	case <-s.release:
		return nil, false, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

func TestMaxConcurrentCalls(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{MaxConcurrentCalls: 1})
	status := loadFixture(t, "status_message")
	args := map[string]string{"account_id": "a.near"}
	st := &blockedStorage{reading: make(chan struct{}, 1), release: make(chan struct{})}
	first := make(chan error, 1)
	go func() {
		_, err := r.Call(context.Background(), status.Code, status.CodeHash, "get_status", viewCtx("c.near", args), st)
		first <- err
	}()
	<-st.reading // the first call holds the only slot

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := r.Call(ctx, status.Code, status.CodeHash, "get_status", viewCtx("c.near", args), newMemStorage())
	require.ErrorIs(t, err, context.DeadlineExceeded, "the second call waits for the slot until its ctx ends")
	var fce *FunctionCallError
	require.False(t, errors.As(err, &fce), "waiting is not a contract failure")

	close(st.release)
	require.NoError(t, <-first)
	_, err = r.Call(context.Background(), status.Code, status.CodeHash, "get_status", viewCtx("c.near", args), newMemStorage())
	require.NoError(t, err, "the slot is free again")
}
