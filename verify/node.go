package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ErrUnreachable is a node that could not be asked: it did not answer, or
// answered something that is not a JSON-RPC response, on every attempt.
var ErrUnreachable = errors.New("node unreachable")

// Defaults of NodeConfig.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultAttempts     = 4
	DefaultMaxBodyBytes = 64 << 20
)

// NodeConfig tunes Node. The zero value of every field takes its default.
type NodeConfig struct {
	// URL is the node's JSON-RPC endpoint (http or https). Required.
	URL string
	// Timeout bounds one attempt. Default DefaultTimeout.
	Timeout time.Duration
	// Attempts is how many times a request is tried before ErrUnreachable:
	// after a transport error, HTTP 429 or 5xx, or a body that is not a
	// JSON-RPC response. Default DefaultAttempts.
	Attempts int
	// MaxBodyBytes caps a response. Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// RetryWait is the wait before the second attempt, doubled for each
	// later one (a Retry-After header, up to 10s, wins). Default 250ms.
	RetryWait time.Duration
}

func (c NodeConfig) withDefaults() NodeConfig {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Attempts == 0 {
		c.Attempts = DefaultAttempts
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.RetryWait == 0 {
		c.RetryWait = 250 * time.Millisecond
	}
	return c
}

func (c NodeConfig) validate() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("node url %q is not an absolute http(s) url", c.URL)
	}
	if c.Timeout < 0 || c.Attempts < 0 || c.MaxBodyBytes < 0 || c.RetryWait < 0 {
		return fmt.Errorf("node timeout, attempts, body limit and retry wait must not be negative")
	}
	return nil
}

// Node asks a NEAR node over JSON-RPC and returns its response as served.
// It is not near.Client: that client is the indexer's, and reads some
// answers as failures to retry or fail over from (INTERNAL_ERROR, a block a
// regular node garbage-collected); here every envelope is an answer to
// compare, and only a transport failure is retried.
type Node struct {
	cfg    NodeConfig
	client *http.Client
}

var _ Target = (*Node)(nil)

// NewNode returns a Node for cfg.
func NewNode(cfg NodeConfig) (*Node, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Node{cfg: cfg, client: &http.Client{Timeout: cfg.Timeout}}, nil
}

// Answer posts body and returns the node's response body, retrying what
// may pass (a dropped connection, 429, 5xx, a body that is not a response).
func (n *Node) Answer(ctx context.Context, body []byte) ([]byte, error) {
	var last error
	for attempt := range n.cfg.Attempts {
		if attempt > 0 {
			wait := n.cfg.RetryWait << (attempt - 1)
			var ra *retryAfter
			if errors.As(last, &ra) {
				wait = ra.wait
			}
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, ctx.Err()
			case <-timer.C:
			}
		}
		out, err := n.attempt(ctx, body)
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		last = err
	}
	return nil, fmt.Errorf("%w: %s after %d attempts: %w", ErrUnreachable, n.cfg.URL, n.cfg.Attempts, last)
}

// retryAfter is a 429 or 503 with a Retry-After header.
type retryAfter struct {
	wait time.Duration
	err  error
}

func (e *retryAfter) Error() string { return e.err.Error() }
func (e *retryAfter) Unwrap() error { return e.err }

func (n *Node) attempt(ctx context.Context, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build node request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("post to node: %w", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, n.cfg.MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read node response: %w", err)
	}
	if int64(len(out)) > n.cfg.MaxBodyBytes {
		return nil, fmt.Errorf("node response exceeds %d bytes", n.cfg.MaxBodyBytes)
	}
	_, perr := ParseAnswer(out)
	// nearcore sends some error envelopes with HTTP 4xx or 5xx (400 for
	// REQUEST_VALIDATION_ERROR, 500 for INTERNAL_ERROR): an envelope is the
	// node's answer whatever the status, except a rate limit.
	if resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode >= 500 && perr != nil) {
		err := fmt.Errorf("node answered HTTP %d", resp.StatusCode)
		if secs, err2 := strconv.Atoi(resp.Header.Get("Retry-After")); err2 == nil && secs >= 0 {
			return nil, &retryAfter{wait: min(time.Duration(secs)*time.Second, 10*time.Second), err: err}
		}
		return nil, err
	}
	if perr != nil {
		return nil, fmt.Errorf("node answered HTTP %d: %w", resp.StatusCode, perr)
	}
	return out, nil
}
