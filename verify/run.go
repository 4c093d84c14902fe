package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nearline/nearline/internal/bounds"

	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/near"
	"golang.org/x/sync/errgroup"
)

// Defaults of RunConfig.
const (
	DefaultConcurrency      = 4
	DefaultMaxShown         = 10
	DefaultProgressInterval = 5 * time.Second
)

// RunConfig tunes Run. The zero value of every field takes its default.
type RunConfig struct {
	// Concurrency is how many requests are in flight at once (each asked of
	// the archive, then the node). Default DefaultConcurrency.
	Concurrency int
	// MaxShown is how many differences the report keeps, the first in
	// request order. Default DefaultMaxShown.
	MaxShown int
	// ProgressInterval is how often progress is logged. Default
	// DefaultProgressInterval.
	ProgressInterval time.Duration
}

func (c RunConfig) withDefaults() RunConfig {
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	c.MaxShown = cmp.Or(c.MaxShown, DefaultMaxShown)
	c.ProgressInterval = cmp.Or(c.ProgressInterval, DefaultProgressInterval)
	return c
}

func (c RunConfig) validate() error {
	return errors.Join(
		bounds.AtLeast("concurrency", c.Concurrency, 1),
		bounds.AtLeast("differences shown", c.MaxShown, 1),
		bounds.AtLeast("progress interval", c.ProgressInterval, 1),
	)
}

// Run asks archive and node every request and reports how their answers
// compare, logging progress to logger (nil: discard). It fails only when a
// request cannot be asked (ErrUnreachable from the node, an archive
// failure, ctx ending), never for a difference.
func Run(ctx context.Context, archive, node Target, reqs []Request, cfg RunConfig, logger *slog.Logger) (*Report, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	logger = logs.OrDiscard(logger)
	start := time.Now()
	tally := newTally(cfg.MaxShown)
	stopProgress := logProgress(cfg, logger, tally, len(reqs), start)
	defer stopProgress()

	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cfg.Concurrency)
	for i, r := range reqs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			v, err := compareOne(gctx, archive, node, r)
			if err != nil {
				return fmt.Errorf("%s: %w", r, err)
			}
			tally.add(i, r, v)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return tally.report(time.Since(start)), nil
}

// verdict is how one request's answers compared.
type verdict struct {
	forwarded bool
	nodeError bool // the node answered an error
	diff      *Difference
}

// compareOne asks the archive, then the node (unless the archive would
// forward the request), and compares the answers.
func compareOne(ctx context.Context, archive, node Target, r Request) (verdict, error) {
	body := r.Body()
	fromArchive, err := archive.Answer(ctx, body)
	if err != nil {
		return verdict{}, fmt.Errorf("ask archive: %w", err)
	}
	if IsForwarded(fromArchive) {
		return verdict{forwarded: true}, nil
	}
	fromNode, err := node.Answer(ctx, body)
	if err != nil {
		return verdict{}, fmt.Errorf("ask node: %w", err)
	}
	nodeAnswer, err := ParseAnswer(fromNode)
	if err != nil {
		return verdict{}, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	archiveAnswer, err := ParseAnswer(fromArchive)
	if err != nil {
		// The archive's handler always answers an envelope; if it did not,
		// that is a difference to show, not a reason to stop.
		return verdict{nodeError: nodeAnswer.Error != nil, diff: &Difference{Archive: near.ClipTo(string(fromArchive), 200), Node: compact(fromNode)}}, nil
	}
	return verdict{nodeError: nodeAnswer.Error != nil, diff: Diff(archiveAnswer, nodeAnswer)}, nil
}

// logProgress logs a progress line every cfg.ProgressInterval until the
// returned stop is called.
func logProgress(cfg RunConfig, logger *slog.Logger, t *tally, total int, start time.Time) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(cfg.ProgressInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				n, different, forwarded := t.progress()
				elapsed := time.Since(start)
				logger.Info("verify progress", "compared", n, "total", total, "different", different,
					"forwarded", forwarded, "per_second", fmt.Sprintf("%.1f", float64(n)/elapsed.Seconds()),
					"elapsed", elapsed.Round(time.Second))
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// tally counts verdicts per kind as they arrive, in any order.
type tally struct {
	mu       sync.Mutex
	maxShown int
	kinds    map[string]*KindCount
	shown    []Mismatch
	n        int
	total    KindCount
}

func newTally(maxShown int) *tally {
	return &tally{maxShown: maxShown, kinds: map[string]*KindCount{}}
}

func (t *tally) add(index int, r Request, v verdict) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	k := t.kinds[r.Kind]
	if k == nil {
		k = &KindCount{Kind: r.Kind}
		t.kinds[r.Kind] = k
	}
	for _, c := range []*KindCount{k, &t.total} {
		c.Requests++
		if v.nodeError {
			c.Errors++
		}
		switch {
		case v.forwarded:
			c.Forwarded++
		case v.diff != nil:
			c.Different++
		default:
			c.Identical++
		}
	}
	if v.diff == nil {
		return
	}
	// Keep the first maxShown in request order, whatever order they came in.
	m := Mismatch{Index: index, Request: r, Difference: *v.diff}
	at, _ := slices.BinarySearchFunc(t.shown, index, func(m Mismatch, i int) int { return cmp.Compare(m.Index, i) })
	if at < t.maxShown {
		t.shown = slices.Insert(t.shown, at, m)
		t.shown = t.shown[:min(len(t.shown), t.maxShown)]
	}
}

func (t *tally) progress() (n, different, forwarded int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n, t.total.Different, t.total.Forwarded
}

func (t *tally) report(elapsed time.Duration) *Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &Report{Total: t.total, Differences: slices.Clone(t.shown), Elapsed: elapsed}
	for _, k := range t.kinds {
		r.Kinds = append(r.Kinds, *k)
	}
	slices.SortFunc(r.Kinds, func(a, b KindCount) int { return cmp.Compare(a.Kind, b.Kind) })
	return r
}
