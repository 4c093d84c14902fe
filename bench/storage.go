package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
)

// gzipRPC records the raw and gzip'd size of every response.
type gzipRPC struct {
	next indexer.RPC

	mu      sync.Mutex
	raw, gz int64
}

var _ indexer.RPC = (*gzipRPC)(nil)

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
	blocks              int64
	dbBytes             int64
	jsonRaw, jsonGzip   float64 // per block
	sampled             int
	tables              []tableSize
	dbTables, dbIndexes int64
}

func (e *benchEnv) storage(ctx context.Context) error {
	if e.indexed == "" || len(e.report.backfill) == 0 {
		return errors.New("storage needs the backfill phase")
	}
	st, err := store.Open(ctx, e.indexed, store.Config{Logger: e.logger})
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
	client, err := near.NewClient(near.ClientConfig{Endpoints: []string{e.chain.plainURL}})
	if err != nil {
		return err
	}
	g := &gzipRPC{next: client}
	src, err := indexer.NewNodeSource(g, indexer.NodeConfig{Logger: e.logger})
	if err != nil {
		return err
	}
	src.Prepare(1)
	step := max(uint64(1), e.o.blocks/500)
	for h := uint64(1); h <= e.o.blocks; h += step {
		_, err := src.Bundle(ctx, h)
		if errors.Is(err, indexer.ErrNoBlock) {
			continue
		}
		if err != nil {
			return err
		}
		r.sampled++
	}
	ratio := float64(g.gz) / float64(g.raw)
	r.jsonRaw = float64(last.resp) / float64(last.blocks)
	r.jsonGzip = r.jsonRaw * ratio
	fmt.Fprintf(os.Stderr, "storage: %.0f B/block in PostgreSQL, %.0f B/block JSON, %.0f B/block gzip'd JSON (ratio %.3f over %d sampled blocks)\n",
		float64(r.dbBytes)/float64(r.blocks), r.jsonRaw, r.jsonGzip, ratio, r.sampled)
	e.report.storage = &r
	return nil
}
