package rpcserve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// forwarder sends requests the archive cannot answer to an upstream node and
// returns its responses verbatim.
type forwarder struct {
	url      string
	client   *http.Client
	maxBytes int64
}

func newForwarder(cfg Config) *forwarder {
	return &forwarder{
		url:      cfg.Forward,
		client:   &http.Client{Timeout: cfg.ForwardTimeout},
		maxBytes: cfg.MaxForwardResponseBytes,
	}
}

// do posts one JSON-RPC request upstream and returns the response body,
// which must be JSON.
func (f *forwarder) do(ctx context.Context, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build upstream request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("post upstream: %w", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read upstream response: %w", err)
	}
	if int64(len(out)) > f.maxBytes {
		return nil, fmt.Errorf("upstream response exceeds %d bytes", f.maxBytes)
	}
	out = bytes.TrimSpace(out)
	if !json.Valid(out) {
		return nil, fmt.Errorf("upstream answered HTTP %d with a body that is not JSON", resp.StatusCode)
	}
	return out, nil
}
