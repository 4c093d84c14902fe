package indexer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nearline/nearline/near"
)

// HTTPConfig configures the HTTP client of the document fetchers (neardata
// and NEAR Lake over HTTP). Only Endpoints is required; the defaults are
// near.Client's.
type HTTPConfig struct {
	// Endpoints are base URLs serving the same documents, tried in order on
	// failure (failover); the one that answered last is tried first.
	Endpoints []string
	// Timeout bounds one request. Default near.DefaultTimeout.
	Timeout time.Duration
	// MaxAttempts bounds the attempts of one fetch across all endpoints.
	// Default near.DefaultMaxAttempts.
	MaxAttempts int
	// BaseBackoff and MaxBackoff bound the wait before a retry (full
	// jitter, doubling per retry; a longer Retry-After of an only endpoint
	// is waited, capped at MaxBackoff). Defaults near.DefaultBaseBackoff,
	// near.DefaultMaxBackoff.
	BaseBackoff, MaxBackoff time.Duration
	// MaxResponseBytes bounds a document. Default near.DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// HTTPClient sends the requests. Default: one that does not follow
	// redirects (neardata's /v0/last_block/final is read from its Location).
	HTTPClient *http.Client
	// Logger receives retry warnings. Default: discard.
	Logger *slog.Logger
	// OnError, when set, is told the kind (near.Fail*) of every failed
	// attempt that is retried.
	OnError func(kind string)
}

func (c HTTPConfig) withDefaults() HTTPConfig {
	c.Timeout = cmp.Or(c.Timeout, near.DefaultTimeout)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, near.DefaultMaxAttempts)
	c.BaseBackoff = cmp.Or(c.BaseBackoff, near.DefaultBaseBackoff)
	c.MaxBackoff = cmp.Or(c.MaxBackoff, near.DefaultMaxBackoff)
	c.MaxResponseBytes = cmp.Or(c.MaxResponseBytes, near.DefaultMaxResponseBytes)
	if c.HTTPClient == nil {
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.MaxIdleConnsPerHost = 64
		c.HTTPClient = &http.Client{Transport: transport}
	}
	if c.HTTPClient.CheckRedirect == nil {
		client := *c.HTTPClient
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		c.HTTPClient = &client
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.OnError == nil {
		c.OnError = func(string) {}
	}
	return c
}

func (c HTTPConfig) validate() error {
	if len(c.Endpoints) == 0 {
		return errors.New("no upstream endpoint")
	}
	for _, e := range c.Endpoints {
		if !strings.HasPrefix(e, "http://") && !strings.HasPrefix(e, "https://") {
			return fmt.Errorf("upstream %q: want an http:// or https:// URL", e)
		}
	}
	if c.MaxAttempts < 1 || c.Timeout < 0 || c.BaseBackoff < 0 || c.MaxBackoff < c.BaseBackoff {
		return errors.New("invalid retry settings")
	}
	return nil
}

// docGetter GETs paths below one of several base URLs with retries,
// backoff, Retry-After and failover.
type docGetter struct {
	cfg       HTTPConfig
	preferred atomic.Int64
}

func newDocGetter(cfg HTTPConfig) (*docGetter, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	for i, e := range cfg.Endpoints {
		cfg.Endpoints[i] = strings.TrimRight(e, "/")
	}
	return &docGetter{cfg: cfg}, nil
}

// httpAnswer is one HTTP response the caller accepted.
type httpAnswer struct {
	status   int
	body     []byte
	location string
}

// errRetry marks an answer the caller's accept rejected as malformed: the
// fetch is retried (another endpoint first).
var errRetry = errors.New("malformed answer")

// get fetches path. Answers with status 429, 5xx or a transport failure are
// retried; any other answer is handed to accept, which returns an error
// wrapping errRetry to retry it, another error to fail, or nil.
func (g *docGetter) get(ctx context.Context, path string, accept func(httpAnswer) error) error {
	n := len(g.cfg.Endpoints)
	start := int(g.preferred.Load())
	var last error
	var retryAfter time.Duration
	for attempt := 0; attempt < g.cfg.MaxAttempts; attempt++ {
		idx := (start + attempt) % n
		if attempt > 0 {
			if err := g.backoff(ctx, attempt, retryAfter); err != nil {
				return fmt.Errorf("get %s: %w (last error: %v)", path, err, last)
			}
		}
		ans, kind, after, err := g.attempt(ctx, g.cfg.Endpoints[idx]+path)
		if err == nil {
			err = accept(ans)
			if err == nil {
				g.preferred.Store(int64(idx))
				return nil
			}
			if !errors.Is(err, errRetry) {
				return fmt.Errorf("get %s%s: %w", g.cfg.Endpoints[idx], path, err)
			}
			kind = near.FailMalformed
		}
		if ctx.Err() != nil {
			return fmt.Errorf("get %s: %w", path, ctx.Err())
		}
		g.cfg.OnError(kind)
		g.cfg.Logger.Warn("upstream fetch failed, retrying", "path", path, "upstream", g.cfg.Endpoints[idx],
			"kind", kind, "attempt", attempt+1, "err", err)
		last = fmt.Errorf("%s: %w", g.cfg.Endpoints[idx], err)
		retryAfter = 0
		if n == 1 {
			retryAfter = after // with another endpoint, fail over at once
		}
	}
	return fmt.Errorf("get %s: %d attempts failed, last: %w", path, g.cfg.MaxAttempts, last)
}

// attempt sends one GET. A non-nil error is retryable, of kind.
func (g *docGetter) attempt(ctx context.Context, url string) (ans httpAnswer, kind string, retryAfter time.Duration, err error) {
	reqCtx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, url, nil)
	if err != nil {
		return ans, near.FailHTTPOther, 0, fmt.Errorf("build request: %w", err)
	}
	resp, err := g.cfg.HTTPClient.Do(req)
	if err != nil {
		kind, err := transportKind(err)
		return ans, kind, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, g.cfg.MaxResponseBytes+1))
	if err != nil {
		kind, err := transportKind(err)
		return ans, kind, 0, err
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			retryAfter = time.Duration(secs) * time.Second
		}
		return ans, near.FailHTTP429, retryAfter, fmt.Errorf("http %d", resp.StatusCode)
	case resp.StatusCode >= 500:
		return ans, near.FailHTTP5xx, 0, fmt.Errorf("http %d", resp.StatusCode)
	case resp.StatusCode == http.StatusRequestTimeout:
		return ans, near.FailTimeout, 0, fmt.Errorf("http %d", resp.StatusCode)
	case int64(len(body)) > g.cfg.MaxResponseBytes:
		return ans, near.FailMalformed, 0, fmt.Errorf("response larger than %d bytes", g.cfg.MaxResponseBytes)
	}
	return httpAnswer{status: resp.StatusCode, body: body, location: resp.Header.Get("Location")}, "", 0, nil
}

func transportKind(err error) (string, error) {
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return near.FailTimeout, fmt.Errorf("request timed out: %w", err)
	}
	return near.FailTransport, err
}

// backoff waits before retry number attempt (1-based), as near.Client does.
func (g *docGetter) backoff(ctx context.Context, attempt int, retryAfter time.Duration) error {
	ceiling := g.cfg.BaseBackoff << min(attempt-1, 30)
	if ceiling > g.cfg.MaxBackoff || ceiling <= 0 {
		ceiling = g.cfg.MaxBackoff
	}
	if ceiling <= 0 {
		return ctx.Err()
	}
	wait := max(time.Duration(rand.Int64N(int64(ceiling))), min(retryAfter, g.cfg.MaxBackoff))
	return sleepCtx(ctx, wait)
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
