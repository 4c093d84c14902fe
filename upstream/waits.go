package upstream

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/nearline/nearline/internal/bounds"
	"github.com/nearline/nearline/internal/retry"
)

// Defaults of Waits.
const (
	DefaultTxFinalWait    = 10 * time.Second
	DefaultTxStallWait    = 2 * time.Second
	DefaultTxPollInterval = 250 * time.Millisecond
	DefaultBehindRetries  = 20
)

// MaxBehindWait caps the wait between two asks of an upstream that is
// behind (Waits.Behind), unless TxPollInterval is longer.
const MaxBehindWait = 5 * time.Second

// Waits is how a source waits for an upstream that is behind: a tx status
// that is not FINAL yet, and a height the upstream does not know yet.
// Both sources' configs embed it. Zero means the default for every field.
type Waits struct {
	// TxFinalWait bounds how long a tx status that is not FINAL yet is
	// re-fetched. Default DefaultTxFinalWait.
	TxFinalWait time.Duration
	// TxStallWait stops re-fetching a non-final status once the upstream's
	// final head has not moved for this long. Default DefaultTxStallWait.
	TxStallWait time.Duration
	// TxPollInterval is the wait between two fetches of a status, and the
	// first wait before a height the upstream does not know is asked
	// again. Default DefaultTxPollInterval.
	TxPollInterval time.Duration
	// BehindRetries bounds how often a height the upstream does not know
	// is asked for again. Default DefaultBehindRetries.
	BehindRetries int
}

// WithDefaults returns w with the default of every zero field.
func (w Waits) WithDefaults() Waits {
	w.TxFinalWait = cmp.Or(w.TxFinalWait, DefaultTxFinalWait)
	w.TxStallWait = cmp.Or(w.TxStallWait, DefaultTxStallWait)
	w.TxPollInterval = cmp.Or(w.TxPollInterval, DefaultTxPollInterval)
	w.BehindRetries = cmp.Or(w.BehindRetries, DefaultBehindRetries)
	return w
}

// Validate reports every wait out of range; w has its defaults applied.
func (w Waits) Validate() error {
	return errors.Join(
		bounds.NotNegative("tx final wait", w.TxFinalWait),
		bounds.NotNegative("tx stall wait", w.TxStallWait),
		bounds.NotNegative("tx poll interval", w.TxPollInterval),
		bounds.AtLeast("behind retries", w.BehindRetries, 1),
	)
}

// ErrBehind, wrapped in what an ask returns, says the upstream does not
// have the height asked for yet: Behind asks again.
var ErrBehind = errors.New("upstream is behind")

// Behind runs ask until it returns anything but ErrBehind, asking again
// at most BehindRetries times: the first after TxPollInterval, each later
// one after twice the wait before, at most MaxBehindWait (or
// TxPollInterval when that is longer). onRetry, when set, is told of each
// ErrBehind that is asked again, before the wait. When the retries run out
// Behind returns the last ask's error; when ctx ends, ctx's error.
func (w Waits) Behind(ctx context.Context, ask func(ctx context.Context) error, onRetry func(err error)) error {
	policy := retry.Policy{
		Backoff:   retry.Backoff{Base: w.TxPollInterval, Max: max(MaxBehindWait, w.TxPollInterval), Jitter: retry.None},
		Attempts:  w.BehindRetries + 1,
		Retryable: func(err error) bool { return errors.Is(err, ErrBehind) },
	}
	if onRetry != nil {
		policy.OnRetry = func(_ int, err error) { onRetry(err) }
	}
	err := policy.Do(ctx, ask)
	if ex, ok := errors.AsType[*retry.ExhaustedError](err); ok {
		return ex.Err
	}
	return err
}
