package rpcserve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/nearline/nearline/internal/httpcall"
)

// forwarder sends requests the archive cannot answer to an upstream node and
// returns its responses verbatim, at most Config.MaxForwards at once.
type forwarder struct {
	url   string
	http  httpcall.Client
	slots chan struct{}
	wait  time.Duration
}

func newForwarder(cfg Config) *forwarder {
	return &forwarder{
		url: cfg.Forward,
		http: httpcall.Client{
			HTTP:   &http.Client{Timeout: cfg.ForwardTimeout},
			Bearer: cfg.ForwardBearerToken,
			Limit:  cfg.MaxForwardResponseBytes,
		},
		slots: make(chan struct{}, cfg.MaxForwards),
		wait:  cfg.QueueWait,
	}
}

// acquire takes one of the MaxForwards places, waiting at most the queue
// wait; false when there was none in time (or ctx ended).
func (f *forwarder) acquire(ctx context.Context) (release func(), ok bool) {
	timer := time.NewTimer(f.wait)
	defer timer.Stop()
	select {
	case f.slots <- struct{}{}:
		return func() { <-f.slots }, true
	case <-timer.C:
	case <-ctx.Done():
	}
	return nil, false
}

// forwardCount is the context key of a request's count of forwarded calls.
type forwardCount struct{}

// withForwardCount gives ctx a count of the calls one HTTP request (a whole
// batch) forwards.
func withForwardCount(ctx context.Context) context.Context {
	return context.WithValue(ctx, forwardCount{}, new(int))
}

// takeForward counts one more forwarded call of ctx's request; false once
// the request has forwarded limit calls.
func takeForward(ctx context.Context, limit int) bool {
	n, ok := ctx.Value(forwardCount{}).(*int)
	if !ok {
		return true
	}
	if *n >= limit {
		return false
	}
	*n++
	return true
}

// do posts one JSON-RPC request upstream and returns the response body,
// which must be JSON.
func (f *forwarder) do(ctx context.Context, body []byte) ([]byte, error) {
	resp, err := f.http.PostJSON(ctx, f.url, body)
	if err != nil {
		return nil, fmt.Errorf("post upstream: %w", err)
	}
	if resp.TooLarge {
		return nil, fmt.Errorf("upstream response exceeds %d bytes", f.http.Limit)
	}
	out := resp.Body
	out = bytes.TrimSpace(out)
	if !json.Valid(out) {
		return nil, fmt.Errorf("upstream answered HTTP %d with a body that is not JSON", resp.StatusCode)
	}
	return out, nil
}
