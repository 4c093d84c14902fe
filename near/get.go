package near

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/nearline/nearline/internal/httpcall"
)

// ErrMalformedAnswer, wrapped in the error a Getter's accept returns, marks
// an answer to fetch again (another endpoint first), as a malformed
// JSON-RPC response is.
var ErrMalformedAnswer = errors.New("malformed answer")

// Answer is an HTTP response handed to a Getter's accept: any status but
// 429, 5xx and 408, which are retried.
type Answer struct {
	Status   int
	Body     []byte
	Location string // a redirect's target; redirects are not followed
}

// Getter GETs documents below one or more base URLs (ClientConfig.Endpoints)
// with the Client's policy: a timeout per request, retries with backoff and
// jitter, a 429's Retry-After, failover between endpoints. It is safe for
// concurrent use.
type Getter struct {
	cfg       ClientConfig
	preferred atomic.Int64 // endpoint that answered last
	pace      *pacer       // ClientConfig.RequestRate
}

// NewGetter returns a Getter for cfg.
func NewGetter(cfg ClientConfig) (*Getter, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("configure near getter: %w", err)
	}
	client := *cfg.HTTPClient
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cfg.HTTPClient = &client
	cfg.Endpoints = append([]string(nil), cfg.Endpoints...)
	for i, e := range cfg.Endpoints {
		cfg.Endpoints[i] = strings.TrimRight(e, "/")
	}
	return &Getter{cfg: cfg, pace: newPacer(cfg.RequestRate)}, nil
}

// Get fetches path (below each endpoint's base URL) until accept takes an
// answer: nil ends the fetch, an error wrapping ErrMalformedAnswer retries,
// any other error fails it.
func (g *Getter) Get(ctx context.Context, path string, accept func(Answer) error) error {
	return g.cfg.failover(ctx, &g.preferred, "get "+path, "upstream fetch failed, retrying", []any{"path", path}, func(idx int) error {
		if err := g.pace.wait(ctx); err != nil {
			return err
		}
		ans, err := g.attempt(ctx, g.cfg.Endpoints[idx]+path)
		if err == nil {
			if err = accept(ans); err == nil || !errors.Is(err, ErrMalformedAnswer) {
				return err
			}
			err = failed(FailMalformed, true, err)
		}
		if ae, ok := errors.AsType[*attemptError](err); ok && ae.retryable && len(g.cfg.Endpoints) == 1 {
			g.pace.hold(ae.retryAfter) // the other requests to the one endpoint wait too
		}
		return err
	})
}

// attempt sends one GET; a 429, 5xx, 408 or transport failure is an
// *attemptError.
func (g *Getter) attempt(ctx context.Context, url string) (Answer, error) {
	reqCtx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, url, nil)
	if err != nil {
		return Answer{}, fmt.Errorf("build request: %w", err)
	}
	resp, err := httpcall.Do(g.cfg.HTTPClient, req, g.cfg.MaxResponseBytes)
	if err != nil {
		return Answer{}, classifyTransport(ctx, err)
	}
	body := resp.Body
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return Answer{}, rateLimited(resp)
	case resp.StatusCode >= 500:
		return Answer{}, failed(FailHTTP5xx, true, fmt.Errorf("http %d", resp.StatusCode))
	case resp.StatusCode == http.StatusRequestTimeout:
		return Answer{}, failed(FailTimeout, true, fmt.Errorf("http %d", resp.StatusCode))
	case resp.TooLarge:
		return Answer{}, failed(FailMalformed, false, fmt.Errorf("response larger than %d bytes", g.cfg.MaxResponseBytes))
	}
	return Answer{Status: resp.StatusCode, Body: body, Location: resp.Header.Get("Location")}, nil
}
