package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/nearline/nearline/internal/httpcall"
	"github.com/nearline/nearline/internal/logs"
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
	Location string // a redirect's target as sent (show it redacted: it may echo the key); redirects are not followed
}

// Getter GETs documents below one or more base URLs (Config.Endpoints)
// with the Client's policy: a timeout per request, retries with backoff and
// jitter, a 429's Retry-After, failover between endpoints. A base URL may
// have a query (?apiKey=KEY): a document's path goes before it, and every
// request keeps it; Config.BearerToken goes as a header with every
// request. It is safe for concurrent use.
type Getter struct {
	cfg       Config
	http      httpcall.Client // cfg's, following no redirect
	logger    *slog.Logger    // retries
	bases     []baseURL       // cfg.Endpoints, parsed
	preferred atomic.Int64    // endpoint that answered last
	pace      *pacer          // Config.RequestRate
}

// baseURL is a Getter's endpoint split where a document's path goes in.
type baseURL struct {
	prefix string // scheme, user information, host and path, without a trailing "/"
	query  string // the raw query, kept on every request
}

func newBaseURL(u *url.URL) baseURL {
	query := u.RawQuery
	bare := *u
	bare.RawQuery, bare.ForceQuery, bare.Fragment, bare.RawFragment = "", false, "", ""
	return baseURL{prefix: strings.TrimRight(bare.String(), "/"), query: query}
}

// url is the URL of path (which may have a query of its own, joined
// after the endpoint's) below the base.
func (b baseURL) url(path string) string {
	path, query, _ := strings.Cut(path, "?")
	switch {
	case b.query == "" && query == "":
		return b.prefix + path
	case b.query == "" || query == "":
		return b.prefix + path + "?" + b.query + query
	}
	return b.prefix + path + "?" + b.query + "&" + query
}

// NewGetter returns a Getter for cfg; logger receives the retries (nil:
// none).
func NewGetter(cfg Config, logger *slog.Logger) (*Getter, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("configure near getter: %w", err)
	}
	client := *cfg.HTTPClient
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cfg.HTTPClient = &client
	cfg.Endpoints = append([]string(nil), cfg.Endpoints...)
	bases := make([]baseURL, len(cfg.Endpoints))
	for i, e := range cfg.Endpoints {
		u, err := parseEndpoint(e) // validate has refused what does not parse
		if err != nil {
			return nil, fmt.Errorf("configure near getter: %w", err)
		}
		bases[i] = newBaseURL(u)
	}
	return &Getter{cfg: cfg, http: cfg.exchange(), logger: logs.OrDiscard(logger), bases: bases, pace: newPacer(cfg.RequestRate)}, nil
}

// Get fetches path (below each endpoint's base URL, before its query)
// until accept takes an answer: nil ends the fetch, an error wrapping
// ErrMalformedAnswer retries, any other error fails it.
func (g *Getter) Get(ctx context.Context, path string, accept func(Answer) error) error {
	return g.cfg.failover(ctx, g.logger, &g.preferred, "get "+path, "upstream fetch failed, retrying", []any{"path", path}, func(idx int) error {
		if err := g.pace.wait(ctx); err != nil {
			return err
		}
		ans, err := g.attempt(ctx, g.bases[idx].url(path))
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
func (g *Getter) attempt(ctx context.Context, target string) (Answer, error) {
	reqCtx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	resp, err := g.http.Get(reqCtx, target)
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
