package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/nearline/nearline/internal/bounds"
	"github.com/nearline/nearline/internal/httpcall"
	"github.com/nearline/nearline/internal/retry"
)

// ErrUnreachable is a node that could not be asked: it did not answer, or
// answered something that is not a JSON-RPC response, on every attempt.
var ErrUnreachable = errors.New("node unreachable")

// Defaults of NodeConfig.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxAttempts      = 4
	DefaultMaxResponseBytes = 64 << 20
	DefaultBaseBackoff      = 250 * time.Millisecond
	DefaultMaxBackoff       = 10 * time.Second
)

// NodeConfig tunes Node. The zero value of every field takes its default.
type NodeConfig struct {
	// URL is the node's JSON-RPC endpoint (http or https). Required.
	URL string
	// Timeout bounds one attempt. Default DefaultTimeout.
	Timeout time.Duration
	// MaxAttempts is how many times a request is tried before ErrUnreachable:
	// after a transport error, HTTP 429 or 5xx, or a body that is not a
	// JSON-RPC response. Default DefaultMaxAttempts.
	MaxAttempts int
	// MaxResponseBytes caps a response. Default DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// BaseBackoff is the wait before the second attempt, doubled for each
	// later one up to MaxBackoff; a longer Retry-After header (up to
	// MaxBackoff) wins. Default DefaultBaseBackoff.
	BaseBackoff time.Duration
	// MaxBackoff caps a wait between attempts. Default
	// DefaultMaxBackoff.
	MaxBackoff time.Duration
}

func (c NodeConfig) withDefaults() NodeConfig {
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, DefaultMaxAttempts)
	c.MaxResponseBytes = cmp.Or(c.MaxResponseBytes, DefaultMaxResponseBytes)
	c.BaseBackoff = cmp.Or(c.BaseBackoff, DefaultBaseBackoff)
	c.MaxBackoff = cmp.Or(c.MaxBackoff, DefaultMaxBackoff)
	return c
}

func (c NodeConfig) validate() error {
	if _, ok := httpcall.ParseHTTP(c.URL); !ok {
		return fmt.Errorf("node url %q is not an absolute http(s) url", httpcall.RedactURL(c.URL))
	}
	return bounds.First(
		bounds.NotNegative("node timeout", c.Timeout),
		bounds.AtLeast("node max attempts", c.MaxAttempts, 1),
		bounds.AtLeast("node max response bytes", c.MaxResponseBytes, 1),
		bounds.NotNegative("node base backoff", c.BaseBackoff),
		bounds.NotNegative("node max backoff", c.MaxBackoff),
	)
}

// Node asks a NEAR node over JSON-RPC and returns its response as served.
// It is not near.Client: that client is the indexer's, and reads some
// answers as failures to retry or fail over from (INTERNAL_ERROR, a block a
// regular node garbage-collected); here every envelope is an answer to
// compare, and only a transport failure is retried.
type Node struct {
	cfg  NodeConfig
	http httpcall.Client
}

var _ Target = (*Node)(nil)

// NewNode returns a Node for cfg.
func NewNode(cfg NodeConfig) (*Node, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("configure node: %w", err)
	}
	return &Node{cfg: cfg, http: httpcall.Client{HTTP: &http.Client{Timeout: cfg.Timeout}, Limit: cfg.MaxResponseBytes}}, nil
}

// Answer posts body and returns the node's response body, retrying what
// may pass (a dropped connection, 429, 5xx, a body that is not a response).
func (n *Node) Answer(ctx context.Context, body []byte) ([]byte, error) {
	policy := retry.Policy{
		Backoff:  retry.Backoff{Base: n.cfg.BaseBackoff, Max: n.cfg.MaxBackoff, Jitter: retry.None},
		Attempts: n.cfg.MaxAttempts,
	}
	var out []byte
	err := policy.Do(ctx, func(ctx context.Context) (err error) {
		out, err = n.attempt(ctx, body)
		return err
	})
	switch ex, exhausted := errors.AsType[*retry.ExhaustedError](err); {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case exhausted:
		return nil, fmt.Errorf("%w: %s after %d attempts: %w", ErrUnreachable, httpcall.RedactURL(n.cfg.URL), ex.Attempts, ex.Err)
	case err != nil:
		return nil, err
	}
	return out, nil
}

func (n *Node) attempt(ctx context.Context, body []byte) ([]byte, error) {
	resp, err := n.http.PostJSON(ctx, n.cfg.URL, body)
	if err != nil {
		return nil, fmt.Errorf("post to node: %w", err)
	}
	if resp.TooLarge {
		return nil, fmt.Errorf("node response exceeds %d bytes", n.cfg.MaxResponseBytes)
	}
	out := resp.Body
	_, perr := ParseAnswer(out)
	// nearcore sends some error envelopes with HTTP 4xx or 5xx (400 for
	// REQUEST_VALIDATION_ERROR, 500 for INTERNAL_ERROR): an envelope is the
	// node's answer whatever the status, except a rate limit.
	if resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode >= 500 && perr != nil) {
		err := fmt.Errorf("node answered HTTP %d", resp.StatusCode)
		if wait, ok := resp.RetryAfter(); ok {
			return nil, retry.After(wait, err)
		}
		return nil, err
	}
	if perr != nil {
		return nil, fmt.Errorf("node answered HTTP %d: %w", resp.StatusCode, perr)
	}
	return out, nil
}
