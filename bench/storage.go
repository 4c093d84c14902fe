package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/upstream"
)

// gzipRPC records the raw and gzip'd size of every response.
type gzipRPC struct {
	next upstream.RPC

	mu      sync.Mutex
	raw, gz int64
}

var _ upstream.RPC = (*gzipRPC)(nil)

func (g *gzipRPC) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := g.next.CallRaw(ctx, method, params)
	if err != nil {
		return raw, err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(raw)
	_ = zw.Close()
	g.mu.Lock()
	g.raw += int64(len(raw))
	g.gz += int64(buf.Len())
	g.mu.Unlock()
	return raw, nil
}

// storageReport compares the archive's bytes per block with the JSON-RPC
// responses the indexer fetched for the same blocks.
type storageReport struct {
	blocks            int64
	dbBytes           int64
	jsonRaw, jsonGzip float64 // per block
	// servedGzip is, per block, the gzip'd JSON of every answer the
	// archive serves about the block: the block, its new chunks, each
	// transaction's EXPERIMENTAL_tx_status, EXPERIMENTAL_changes_in_block
	// and one EXPERIMENTAL_changes answer per kind of change (each answer
	// gzip'd on its own, as HTTP would).
	servedGzip float64
	// floorZstd is, per block, all of the block's verbatim JSON (block,
	// chunks, changes, statuses) in one zstd frame at the fastest level:
	// about what any layout keeping it exactly costs before a single typed
	// column or index.
	floorZstd           float64
	sampled             int
	tables              []tableSize
	dbTables, dbIndexes int64
}

func (e *benchEnv) storage(ctx context.Context) error {
	if e.indexed == "" || len(e.report.backfill) == 0 {
		return errors.New("storage needs the backfill phase")
	}
	st, err := store.Open(ctx, e.indexed, store.Config{}, e.logger)
	if err != nil {
		return err
	}
	defer st.Close()
	last := e.report.backfill[len(e.report.backfill)-1]
	r := storageReport{blocks: last.blocks, dbBytes: last.dbBytes}
	if r.tables, err = tableSizes(ctx, st); err != nil {
		return err
	}
	for _, t := range r.tables {
		r.dbTables += t.table
		r.dbIndexes += t.indexes
	}
	// Raw JSON per block is exact (every response of the last backfill was
	// counted); the gzip ratio is measured on a sample of blocks, each
	// response compressed on its own (as HTTP gzip would).
	client, err := upstream.NewClient(upstream.Config{Endpoints: []string{e.chain.plainURL}}, nil)
	if err != nil {
		return err
	}
	g := &gzipRPC{next: client}
	src, err := rpcsource.New(g, rpcsource.Config{}, e.logger)
	if err != nil {
		return err
	}
	src.Prepare(1)
	step := max(uint64(1), e.o.blocks/500)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	var served, floor int64
	for h := uint64(1); h <= e.o.blocks; h += step {
		b, err := src.Bundle(ctx, h)
		if errors.Is(err, bundle.ErrNoBlock) {
			continue
		}
		if err != nil {
			return err
		}
		n, err := servedBytes(b)
		if err != nil {
			return err
		}
		served += n
		floor += int64(len(enc.EncodeAll(verbatim(b), nil)))
		r.sampled++
	}
	r.servedGzip = float64(served) / float64(r.sampled)
	r.floorZstd = float64(floor) / float64(r.sampled)
	ratio := float64(g.gz) / float64(g.raw)
	r.jsonRaw = float64(last.resp) / float64(last.blocks)
	r.jsonGzip = r.jsonRaw * ratio
	fmt.Fprintf(os.Stderr, "storage: %.0f B/block in PostgreSQL, %.0f B/block JSON, %.0f B/block gzip'd JSON (ratio %.3f over %d sampled blocks), %.0f B/block of gzip'd answers served, %.0f B/block of verbatim JSON in one zstd frame\n",
		float64(r.dbBytes)/float64(r.blocks), r.jsonRaw, r.jsonGzip, ratio, r.sampled, r.servedGzip, r.floorZstd)
	e.report.storage = &r
	return nil
}

// verbatim is every JSON value the archive keeps as served for a block.
func verbatim(b *bundle.Bundle) []byte {
	out := append([]byte(nil), b.BlockJSON...)
	for _, c := range b.Chunks {
		out = append(out, c.JSON...)
	}
	for _, c := range b.Changes {
		out = append(out, c.JSON...)
	}
	for _, st := range b.TxStatuses {
		out = append(out, st.JSON...)
	}
	return out
}

// servedBytes is the gzip'd size of every answer about a block (see
// storageReport.servedGzip), each compressed on its own.
func servedBytes(b *bundle.Bundle) (int64, error) {
	var answers [][]byte
	answers = append(answers, b.BlockJSON)
	for _, c := range b.Chunks {
		answers = append(answers, c.JSON)
	}
	for _, st := range b.TxStatuses {
		answers = append(answers, st.JSON)
	}
	hash := b.Block.Header.Hash
	effects, err := json.Marshal(map[string]any{"block_hash": hash, "changes": b.Effects})
	if err != nil {
		return 0, err
	}
	answers = append(answers, effects)
	byKind := map[string][]json.RawMessage{}
	var kinds []string
	for _, c := range b.Changes {
		kind, _, _ := strings.Cut(c.View.Type, "_deletion")
		kind = strings.TrimSuffix(kind, "_update")
		if _, ok := byKind[kind]; !ok {
			kinds = append(kinds, kind)
		}
		byKind[kind] = append(byKind[kind], c.JSON)
	}
	for _, k := range kinds {
		ans, err := json.Marshal(map[string]any{"block_hash": hash, "changes": byKind[k]})
		if err != nil {
			return 0, err
		}
		answers = append(answers, ans)
	}
	var n int64
	for _, a := range answers {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(a)
		_ = zw.Close()
		n += int64(buf.Len())
	}
	return n, nil
}
