package indexer

import (
	"sync/atomic"
	"time"
)

// stages is where the pipeline's wall time went: each stage's busy time
// and the time it waited on its neighbours. Fetch, prepare and write run
// at once (a batch fetched while the one before is prepared and the one
// before that written), so the figures overlap; the writer's idle time
// is what the stages before it cost the run.
type stages struct {
	fetch        atomic.Int64 // fetching and decoding a batch (fetchRange)
	fetchBlocked atomic.Int64 // a fetched batch waiting for link to take it
	prepare      atomic.Int64 // continuity and the sink's Prepare
	prepBlocked  atomic.Int64 // a prepared batch waiting for the writer
	write        atomic.Int64 // the sink's Write (the commit)
	writeIdle    atomic.Int64 // the writer waiting for a prepared batch
	blocks       atomic.Int64
}

func (s *stages) add(d *atomic.Int64, since time.Time) { d.Add(int64(time.Since(since))) }

// attrs returns each stage's milliseconds per block written.
func (s *stages) attrs() []any {
	n := max(s.blocks.Load(), 1)
	per := func(d *atomic.Int64) float64 { return round1(float64(d.Load()) / float64(n) / 1e6) }
	return []any{"blocks", s.blocks.Load(),
		"fetch_ms", per(&s.fetch), "fetch_blocked_ms", per(&s.fetchBlocked),
		"prepare_ms", per(&s.prepare), "prepare_blocked_ms", per(&s.prepBlocked),
		"write_ms", per(&s.write), "write_idle_ms", per(&s.writeIdle)}
}
