package rpcserve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/nearline/nearline/internal/httpcall"
)

// forwarder sends requests the archive cannot answer to an upstream node and
// returns its responses verbatim.
type forwarder struct {
	url      string
	bearer   string // Config.ForwardBearerToken
	client   *http.Client
	maxBytes int64
}

func newForwarder(cfg Config) *forwarder {
	return &forwarder{
		url:      cfg.Forward,
		bearer:   cfg.ForwardBearerToken,
		client:   &http.Client{Timeout: cfg.ForwardTimeout},
		maxBytes: cfg.MaxForwardResponseBytes,
	}
}

// do posts one JSON-RPC request upstream and returns the response body,
// which must be JSON.
func (f *forwarder) do(ctx context.Context, body []byte) ([]byte, error) {
	req, err := httpcall.PostJSON(ctx, f.url, body)
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	httpcall.SetBearer(req, f.bearer)
	resp, err := httpcall.Do(f.client, req, f.maxBytes)
	if err != nil {
		return nil, fmt.Errorf("post upstream: %w", err)
	}
	if resp.TooLarge {
		return nil, fmt.Errorf("upstream response exceeds %d bytes", f.maxBytes)
	}
	out := resp.Body
	out = bytes.TrimSpace(out)
	if !json.Valid(out) {
		return nil, fmt.Errorf("upstream answered HTTP %d with a body that is not JSON", resp.StatusCode)
	}
	return out, nil
}
