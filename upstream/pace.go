package upstream

import (
	"context"
	"sync"
	"time"

	"github.com/nearline/nearline/internal/retry"
)

// pacer spaces requests at most rate a second over all that share it, and
// pauses them all for a 429's Retry-After, so that a rate-limited upstream
// (a free neardata endpoint allows 180 requests a minute per IP) is
// followed without storms of 429s. A nil *pacer lets every request go.
type pacer struct {
	interval time.Duration

	mu   sync.Mutex
	next time.Time // when the next request may go
}

func newPacer(rate float64) *pacer {
	if rate <= 0 {
		return nil
	}
	return &pacer{interval: time.Duration(float64(time.Second) / rate)}
}

// wait takes the next request slot, waiting for it.
func (p *pacer) wait(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.interval)
	p.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		return retry.Sleep(ctx, d)
	}
	return nil
}

// hold lets no request go for d from now.
func (p *pacer) hold(d time.Duration) {
	if p == nil || d <= 0 {
		return
	}
	p.mu.Lock()
	if until := time.Now().Add(d); until.After(p.next) {
		p.next = until
	}
	p.mu.Unlock()
}
