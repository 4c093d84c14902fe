package main

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/procstat"
)

// steadyWatch measures the indexer's CPU per block once it is warm and
// while its pipeline is full: it reads the indexer's cursor and the
// process's CPU time every interval, and keeps the first reading at or
// past warm and the last one at or below until. A process's first
// blocks pay for what a long backfill pays once (its heap's pages
// faulted in, decoders compiled, partitions created): the whole run's
// figure holds them, this one does not. Its last blocks are written
// after the last has been fetched and decoded, ahead of the cursor:
// a window reaching the end would count their writing and not their
// decoding, so it ends well before.
type steadyWatch struct {
	stop chan struct{}
	wg   sync.WaitGroup

	mu          sync.Mutex
	from, to    steadySample
	fromSet, ok bool
}

type steadySample struct {
	height int64
	cpu    time.Duration
}

func watchSteady(ctx context.Context, dbURL string, pid int, warm, until int64, interval time.Duration) *steadyWatch {
	w := &steadyWatch{stop: make(chan struct{})}
	w.wg.Go(func() {
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			return
		}
		defer conn.Close(context.WithoutCancel(ctx))
		every(w.stop, interval, func() {
			var h int64
			// The cursor first: the CPU read after it has indexed at
			// least the blocks it shows.
			err := conn.QueryRow(ctx, `SELECT height FROM indexer_cursor WHERE name = 'main'`).Scan(&h)
			cpu, cpuErr := procstat.ReadCPU(pid, false)
			if cpuErr == nil && err == nil && h >= warm && h <= until {
				w.mu.Lock()
				if !w.fromSet {
					w.from, w.fromSet = steadySample{h, cpu}, true
				} else if h > w.from.height {
					w.to, w.ok = steadySample{h, cpu}, true
				}
				w.mu.Unlock()
			}
		})
	})
	return w
}

// finish stops the watch and returns the CPU per block between its first
// and last readings from warm to until, and the blocks it covers; ok is false when
// it has fewer than two.
func (w *steadyWatch) finish() (perBlock time.Duration, blocks int64, ok bool) {
	close(w.stop)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ok {
		return 0, 0, false
	}
	blocks = w.to.height - w.from.height
	return (w.to.cpu - w.from.cpu) / time.Duration(blocks), blocks, true
}
