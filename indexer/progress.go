package indexer

import (
	"context"
	"sync"
	"time"
)

// progress tracks what the loop has done, for the periodic log line.
type progress struct {
	mu         sync.Mutex
	start      uint64
	to         *uint64
	began      time.Time
	height     uint64 // last committed height
	any        bool
	head       uint64
	blocks     int
	lastBlocks int
	rows       int
	lastRows   int
	lastAt     time.Time
}

func newProgress(start uint64, to *uint64) *progress {
	now := time.Now()
	return &progress{start: start, to: to, began: now, lastAt: now}
}

func (p *progress) setHead(head uint64) {
	p.mu.Lock()
	p.head = head
	p.mu.Unlock()
}

func (p *progress) committed(height uint64, blocks, rows int) {
	p.mu.Lock()
	p.height, p.any = height, true
	p.blocks += blocks
	p.rows += rows
	p.mu.Unlock()
}

// report logs a progress line every ProgressInterval until ctx ends.
func (ix *Indexer) report(ctx context.Context, p *progress) {
	ticker := time.NewTicker(ix.cfg.ProgressInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			ix.logProgress(p)
		}
	}
}

// logProgress logs height, blocks/s since the last line, lag behind the
// head and, for a bounded range, the ETA.
func (ix *Indexer) logProgress(p *progress) {
	p.mu.Lock()
	now := time.Now()
	elapsed := now.Sub(p.lastAt).Seconds()
	rate, rowRate := 0.0, 0.0
	if elapsed > 0 {
		rate = float64(p.blocks-p.lastBlocks) / elapsed
		rowRate = float64(p.rows-p.lastRows) / elapsed
	}
	p.lastBlocks, p.lastRows, p.lastAt = p.blocks, p.rows, now
	height, head, anyBlock, blocks := p.height, p.head, p.any, p.blocks
	p.mu.Unlock()
	ix.cfg.Metrics.setRates(rate, rowRate)
	if !anyBlock {
		ix.logger.Info("indexing", "head", head, "blocks", 0)
		return
	}
	attrs := []any{"height", height, "head", head, "lag", int64(head) - int64(height),
		"blocks", blocks, "blocks_per_second", round1(rate), "rows_per_second", int64(rowRate)}
	if p.to != nil && *p.to > height && rate > 0 {
		eta := time.Duration(float64(*p.to-height) / rate * float64(time.Second))
		attrs = append(attrs, "eta", eta.Round(time.Second))
	}
	ix.logger.Info("indexing", attrs...)
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
