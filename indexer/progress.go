package indexer

import (
	"context"
	"sync"
	"time"
)

// rateWindow is the span the progress line's rates are measured over.
const rateWindow = time.Minute

// quietInterval is how often a follower that keeps up (or waits for its
// first block) logs its progress line: a line a minute, and at once when it
// falls behind or catches up, instead of every ProgressInterval for ever.
const quietInterval = time.Minute

// caughtUpLag is the most heights behind the head at which a follower
// counts as keeping up (mainnet's head moves ~1.7 heights a second).
const caughtUpLag = 10

// etaSmoothing is the weight of each line's windowed rate in the rate the
// ETA is computed from (an exponential moving average), so that the ETA
// follows a lasting change of speed without jumping with one slow batch.
const etaSmoothing = 0.2

// progress tracks what the loop has done, for the periodic log line.
type progress struct {
	mu     sync.Mutex
	start  uint64
	to     *uint64
	began  time.Time
	height uint64 // last committed height
	any    bool
	head   uint64
	blocks int
	rows   int
	// samples are the totals at each commit within the last rateWindow
	// (and the one before it, the window's start).
	samples []progressSample
	// smoothed is the rate the ETA uses; 0 until the first rate.
	smoothed float64
	// lastLine and lastQuiet: when the last line was logged, and whether
	// it was logged in a quiet state (see quiet).
	lastLine  time.Time
	lastQuiet bool
}

// quiet reports whether the progress line due at now is left out: a
// follower (no To) that keeps up, or has no block yet, logs it once a
// quietInterval, and at once when it enters or leaves that state; a
// backfill, or a follower behind, logs every line. Called with mu held;
// it records the line when it is not left out.
func (p *progress) quiet(now time.Time) bool {
	quietState := p.to == nil && (!p.any || p.head <= p.height+caughtUpLag)
	if quietState && p.lastQuiet && now.Sub(p.lastLine) < quietInterval {
		return true
	}
	p.lastLine, p.lastQuiet = now, quietState
	return false
}

type progressSample struct {
	at           time.Time
	blocks, rows int
}

func newProgress(start uint64, to *uint64) *progress {
	now := time.Now()
	return &progress{start: start, to: to, began: now, samples: []progressSample{{at: now}}}
}

func (p *progress) setHead(head uint64) {
	p.mu.Lock()
	p.head = head
	p.mu.Unlock()
}

func (p *progress) committed(height uint64, blocks, rows int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.height, p.any = height, true
	p.blocks += blocks
	p.rows += rows
	now := time.Now()
	p.samples = append(p.samples, progressSample{at: now, blocks: p.blocks, rows: p.rows})
	// Keep one sample at or before the window's start.
	for len(p.samples) > 2 && now.Sub(p.samples[1].at) >= rateWindow {
		p.samples = p.samples[1:]
	}
}

// rates returns blocks/s and rows/s over the last rateWindow (from the
// first sample in it, or since the start when the run is younger) up to
// now, and the span they were measured over.
func (p *progress) rates(now time.Time) (blocks, rows float64, span time.Duration) {
	first := p.samples[0]
	for _, s := range p.samples {
		if now.Sub(s.at) <= rateWindow {
			break
		}
		first = s
	}
	span = now.Sub(first.at)
	if span <= 0 {
		return 0, 0, 0
	}
	return float64(p.blocks-first.blocks) / span.Seconds(), float64(p.rows-first.rows) / span.Seconds(), span
}

// smooth folds a line's windowed rate into the rate the ETA is computed
// from and returns it: the first rate as it is, then an exponential average
// (etaSmoothing), so one stalled window lowers it by a fifth, not to zero.
func (p *progress) smooth(rate float64) float64 {
	if p.smoothed == 0 {
		p.smoothed = rate
	} else {
		p.smoothed += etaSmoothing * (rate - p.smoothed)
	}
	return p.smoothed
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

// logProgress logs (unless quiet) height, lag behind the head, blocks and rows committed,
// the rates over the last rateWindow (rate_window says over how long),
// the memory budget's use and, for a bounded range, the ETA from a
// smoothed rate.
func (ix *Indexer) logProgress(p *progress) {
	p.mu.Lock()
	now := time.Now()
	rate, rowRate, span := p.rates(now)
	if span > 0 {
		p.smooth(rate)
	}
	height, head, anyBlock, blocks, rows, smoothed := p.height, p.head, p.any, p.blocks, p.rows, p.smoothed
	quiet := p.quiet(now)
	p.mu.Unlock()
	ix.cfg.Metrics.setRates(rate, rowRate)
	if quiet {
		return
	}
	used, peak, limit := ix.budget.usage()
	budgetAttrs := []any{"memory_budget_used_mib", used >> 20, "memory_budget_peak_mib", peak >> 20, "memory_budget_mib", limit >> 20}
	if !anyBlock {
		ix.logger.Info("indexing", append([]any{"head", head, "blocks", 0}, budgetAttrs...)...)
		return
	}
	attrs := []any{"height", height, "head", head, "lag", int64(head) - int64(height),
		"blocks", blocks, "rows", rows, "blocks_per_second", round1(rate), "rows_per_second", int64(rowRate),
		"rate_window", span.Round(time.Second)}
	if p.to != nil && *p.to > height && smoothed > 0 {
		eta := time.Duration(float64(*p.to-height) / smoothed * float64(time.Second))
		attrs = append(attrs, "eta", eta.Round(time.Second))
	}
	ix.logger.Info("indexing", append(attrs, budgetAttrs...)...)
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
