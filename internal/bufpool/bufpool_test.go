package bufpool_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/bufpool"
)

func TestGetReusesTheLastBufferThatFits(t *testing.T) {
	p := bufpool.New(8 << 20)
	small, large := p.Get(bufpool.MinSize), p.Get(1<<20)
	require.Empty(t, large)
	require.GreaterOrEqual(t, cap(large), 1<<20)
	p.Put(append(large, "document"...))
	p.Put(small)

	got := p.Get(1 << 20) // the small one, kept last, is too small
	require.Empty(t, got)
	require.Same(t, &large[:1][0], &got[:1][0], "the large buffer is handed back")
	got2 := p.Get(bufpool.MinSize)
	require.Same(t, &small[:1][0], &got2[:1][0])
	fresh := p.Get(bufpool.MinSize)
	require.NotSame(t, &small[:1][0], &fresh[:1][0], "a buffer is handed out once")
}

func TestPutKeepsWithinTheLimit(t *testing.T) {
	p := bufpool.New(3 * bufpool.MinSize)
	a, b, c := make([]byte, 0, bufpool.MinSize), make([]byte, 0, bufpool.MinSize), make([]byte, 0, 2*bufpool.MinSize)
	p.Put(a)
	p.Put(b)
	p.Put(c) // a is dropped to make room
	p.Put(make([]byte, 0, bufpool.MinSize-1))
	p.Put(make([]byte, 0, 4*bufpool.MinSize)) // larger than the limit
	got := [][]byte{p.Get(bufpool.MinSize), p.Get(bufpool.MinSize)}
	require.Same(t, &c[:1][0], &got[0][:1][0])
	require.Same(t, &b[:1][0], &got[1][:1][0])
	third := p.Get(bufpool.MinSize)
	require.NotSame(t, &a[:1][0], &third[:1][0], "the oldest was dropped")
	require.Greater(t, cap(p.Get(4*bufpool.MinSize)), 4*bufpool.MinSize, "a new buffer has room to spare")
}

func TestPoisonedPoolOverwritesWhatItIsGiven(t *testing.T) {
	p := bufpool.NewPoisoned(1 << 20)
	body := append(p.Get(bufpool.MinSize), `{"block":{}}`...)
	kept := body[2:7] // a slice still read after the Put
	p.Put(body)
	require.Equal(t, bytes.Repeat([]byte{bufpool.PoisonByte}, 5), kept)
}

func TestNilPoolAllocates(t *testing.T) {
	var p *bufpool.Pool
	b := p.Get(10)
	require.GreaterOrEqual(t, cap(b), 10)
	p.Put(b)
}
