package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgCPU measures the CPU PostgreSQL spends for one database while other
// databases of the same server are busy (the benchmark shares its server):
// every backend connected to the database (pg_stat_activity.datname, so
// autovacuum workers on it too) is found by polling, and its user+system
// time read from /proc/<pid>/stat. A backend's time at its last poll is
// counted (it started after the measurement began: the database is fresh);
// what one spends between its last poll and its exit is lost, little with
// the indexer's pooled connections. The server's background processes
// (checkpointer, background writer, WAL writer) work for every database at
// once: their time is kept apart, as a bound.
type pgCPU struct {
	conn     *pgx.Conn
	database string

	mu         sync.Mutex
	backends   map[int32]float64
	background map[int32]float64 // at the start
	bgEnd      map[int32]float64
	stop       chan struct{}
	done       chan struct{}
}

// startPGCPU begins polling the backends of database over conn (connected
// to another database of the server) every interval, until stopped.
func startPGCPU(ctx context.Context, conn *pgx.Conn, database string, interval time.Duration) (*pgCPU, error) {
	p := &pgCPU{conn: conn, database: database, backends: map[int32]float64{},
		stop: make(chan struct{}), done: make(chan struct{})}
	var err error
	if p.background, err = p.backgroundTimes(ctx); err != nil {
		return nil, err
	}
	if err := p.poll(ctx); err != nil {
		return nil, err
	}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				_ = p.poll(ctx) // a poll that fails is retried at the next tick
			}
		}
	}()
	return p, nil
}

func (p *pgCPU) poll(ctx context.Context) error {
	rows, err := p.conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = $1`, p.database)
	if err != nil {
		return fmt.Errorf("list backends: %w", err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("list backends: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pid := range pids {
		if s := procSeconds(int(pid), false); s > 0 {
			p.backends[pid] = s
		}
	}
	return nil
}

func (p *pgCPU) backgroundTimes(ctx context.Context) (map[int32]float64, error) {
	rows, err := p.conn.Query(ctx, `SELECT pid FROM pg_stat_activity
		WHERE backend_type IN ('checkpointer', 'background writer', 'walwriter')`)
	if err != nil {
		return nil, fmt.Errorf("list background processes: %w", err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("list background processes: %w", err)
	}
	out := map[int32]float64{}
	for _, pid := range pids {
		out[pid] = procSeconds(int(pid), false)
	}
	return out, nil
}

// finish stops polling after a last poll and returns the seconds of CPU
// the database's backends used, and the server's background processes
// (for every database) in the meantime.
func (p *pgCPU) finish(ctx context.Context) (backends, background float64, err error) {
	close(p.stop)
	<-p.done
	if err := p.poll(ctx); err != nil {
		return 0, 0, err
	}
	end, err := p.backgroundTimes(ctx)
	if err != nil {
		return 0, 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.backends {
		backends += s
	}
	for pid, s := range end {
		if s0, ok := p.background[pid]; ok {
			background += s - s0
		}
	}
	return backends, background, nil
}
