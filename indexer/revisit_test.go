package indexer_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
)

// memSink is an in-memory Sink: it keeps the committed blocks' cursors and a
// set of transaction statuses stored before they were FINAL.
type memSink struct {
	mu        sync.Mutex
	blocks    []bundle.Cursor // committed, in height order
	pending   []bundle.TxRef
	updated   map[string]bundle.TxStatus // by tx hash
	maxAsked  uint64                     // highest maxHeight PendingTxStatuses was asked for
	pendCalls int
}

var _ indexer.Sink = (*memSink)(nil)

func (m *memSink) Range(context.Context) (bundle.Range, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.blocks) == 0 {
		return bundle.Range{}, false, nil
	}
	return bundle.Range{Cursor: store.DefaultCursor, First: m.blocks[0].Height, Last: m.blocks[len(m.blocks)-1]}, true, nil
}

// LinkBelow: the one range is contiguous from its first block.
func (m *memSink) LinkBelow(_ context.Context, start uint64) (bundle.Link, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.blocks) - 1; i >= 0; i-- {
		if m.blocks[i].Height < start {
			return bundle.Link{Block: m.blocks[i], RangeFirst: m.blocks[0].Height}, true, nil
		}
	}
	return bundle.Link{}, false, nil
}

// RangeAbove: there is no other cursor.
func (m *memSink) RangeAbove(context.Context, uint64) (bundle.Range, bool, error) {
	return bundle.Range{}, false, nil
}

func (m *memSink) Prepare(bundles []bundle.Bundle) (*bundle.Batch, error) {
	return &bundle.Batch{Bundles: bundles}, nil
}

func (m *memSink) Write(_ context.Context, batch *bundle.Batch) (bundle.CommitStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	bundles := batch.Bundles
	for _, b := range bundles {
		hdr := b.Block.Header
		m.blocks = append(m.blocks, bundle.Cursor{Height: hdr.Height, Hash: hdr.Hash})
	}
	return bundle.CommitStats{Blocks: len(bundles)}, nil
}

func (m *memSink) PutGenesisConfig(context.Context, json.RawMessage) error { return nil }

func (m *memSink) PendingTxStatuses(_ context.Context, maxHeight uint64, limit int) ([]bundle.TxRef, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pendCalls++
	m.maxAsked = max(m.maxAsked, maxHeight)
	var out []bundle.TxRef
	for _, ref := range m.pending {
		if ref.Height <= maxHeight && len(out) < limit {
			out = append(out, ref)
		}
	}
	return out, nil
}

func (m *memSink) UpdateTxStatus(_ context.Context, ref bundle.TxRef, st bundle.TxStatus) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.updated[ref.TxHash] = st
	for i, p := range m.pending {
		if p.TxHash == ref.TxHash {
			m.pending = append(m.pending[:i], m.pending[i+1:]...)
			break
		}
	}
	return nil
}

// txAnswer is what revisitSource answers for one transaction.
type txAnswer struct {
	final bool
	err   error
}

// revisitSource is fakeSource with TxStatus answers set per transaction; it
// records which transactions were asked for.
type revisitSource struct {
	*fakeSource
	answers map[string]txAnswer

	mu    sync.Mutex
	asked map[string]int
}

var _ indexer.Source = (*revisitSource)(nil)

func (s *revisitSource) TxStatus(_ context.Context, ref bundle.TxRef) (bundle.TxStatus, bool, error) {
	s.mu.Lock()
	s.asked[ref.TxHash]++
	s.mu.Unlock()
	a, ok := s.answers[ref.TxHash]
	if !ok {
		return bundle.TxStatus{}, false, errors.New("unexpected tx " + ref.TxHash)
	}
	if a.err != nil {
		return bundle.TxStatus{}, false, a.err
	}
	status := "EXECUTED"
	if a.final {
		status = "FINAL"
	}
	return bundle.TxStatus{TxHash: ref.TxHash, SignerID: ref.SignerID,
		JSON: json.RawMessage(`{"final_execution_status":"` + status + `"}`)}, a.final, nil
}

// TestRevisitGoesThroughSourceAndSink: the loop asks the Sink for statuses
// stored before they were FINAL, fetches each again from the Source, and
// hands the Sink those that are FINAL now; one the upstream no longer has is
// kept as stored, and one included above the committed height is not asked
// for.
func TestRevisitGoesThroughSourceAndSink(t *testing.T) {
	t.Parallel()
	sink := &memSink{updated: map[string]bundle.TxStatus{}, pending: []bundle.TxRef{
		{TxHash: "final-now", SignerID: "a.near", Height: 3},
		{TxHash: "still-pending", SignerID: "b.near", Height: 4},
		{TxHash: "gone", SignerID: "c.near", Height: 6},
		{TxHash: "above-to", SignerID: "d.near", Height: 50},
	}}
	src := &revisitSource{fakeSource: newFakeSource(testChain(), 100), asked: map[string]int{}, answers: map[string]txAnswer{
		"final-now":     {final: true},
		"still-pending": {final: false},
		"gone":          {err: near.UnknownTransaction("gone")},
	}}
	// A RevisitInterval of 1ns revisits after every commit.
	ix, err := indexer.New(indexer.Config{From: ptr(1), To: ptr(30), BatchSize: 5, RevisitInterval: time.Nanosecond}, src, sink, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(context.Background()))

	sink.mu.Lock()
	defer sink.mu.Unlock()
	src.mu.Lock()
	defer src.mu.Unlock()
	require.Greater(t, sink.pendCalls, 1, "revisited between commits")
	require.Equal(t, uint64(30), sink.maxAsked, "pending statuses asked for up to the committed height")
	require.Equal(t, []string{"final-now"}, keys(sink.updated), "only a status FINAL now replaces the stored one")
	require.JSONEq(t, `{"final_execution_status":"FINAL"}`, string(sink.updated["final-now"].JSON))
	require.Equal(t, 1, src.asked["final-now"], "asked once: FINAL, then no longer pending")
	require.Greater(t, src.asked["still-pending"], 1, "asked again on later passes")
	require.Greater(t, src.asked["gone"], 0)
	require.Zero(t, src.asked["above-to"], "included above every committed height")
	require.ElementsMatch(t, []string{"still-pending", "gone", "above-to"},
		[]string{sink.pending[0].TxHash, sink.pending[1].TxHash, sink.pending[2].TxHash})
}

// TestRevisitErrorStopsTheLoop: a TxStatus failure other than the upstream
// not having the transaction is not swallowed.
func TestRevisitErrorStopsTheLoop(t *testing.T) {
	t.Parallel()
	sink := &memSink{updated: map[string]bundle.TxStatus{}, pending: []bundle.TxRef{{TxHash: "broken", SignerID: "a.near", Height: 2}}}
	src := &revisitSource{fakeSource: newFakeSource(testChain(), 100), asked: map[string]int{}, answers: map[string]txAnswer{
		"broken": {err: errors.New("upstream exploded")},
	}}
	ix, err := indexer.New(indexer.Config{From: ptr(1), To: ptr(30), BatchSize: 5, RevisitInterval: time.Nanosecond}, src, sink, nil)
	require.NoError(t, err)
	err = ix.Run(context.Background())
	require.ErrorContains(t, err, "revisit tx broken: upstream exploded")
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
