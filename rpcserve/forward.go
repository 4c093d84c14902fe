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
	url  string
	http httpcall.Client
}

func newForwarder(cfg Config) *forwarder {
	return &forwarder{url: cfg.Forward, http: httpcall.Client{
		HTTP:   &http.Client{Timeout: cfg.ForwardTimeout},
		Bearer: cfg.ForwardBearerToken,
		Limit:  cfg.MaxForwardResponseBytes,
	}}
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
