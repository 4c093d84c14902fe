package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nearline/nearline/internal/httpcall"
	"github.com/nearline/nearline/upstream"
)

// ErrUnreachable is a node that could not be asked: it did not answer, or
// answered something that is not a JSON-RPC response, on every attempt.
var ErrUnreachable = errors.New("node unreachable")

// Defaults of the upstream.Config NewNode takes, where they differ from
// the indexer's: a verify request may be slow (a contract call at an old
// height), and there is no hurry to retry.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxAttempts      = 4
	DefaultMaxResponseBytes = 64 << 20
	DefaultBaseBackoff      = 250 * time.Millisecond
	DefaultMaxBackoff       = 10 * time.Second
)

// Node asks a NEAR node over JSON-RPC and returns its response as served,
// through upstream.Client.Post: every envelope is an answer to compare,
// and only a failure to get one (a transport failure, 429, a body that is
// not a JSON-RPC response) is retried, or failed over between endpoints.
type Node struct {
	client *upstream.Client
	shown  string // the endpoints, redacted
}

var _ Target = (*Node)(nil)

// NewNode returns a Node asking cfg.Endpoints. Zero fields of cfg take
// verify's defaults (Default*) where they differ from upstream's.
func NewNode(cfg upstream.Config) (*Node, error) {
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, DefaultMaxAttempts)
	cfg.MaxResponseBytes = cmp.Or(cfg.MaxResponseBytes, DefaultMaxResponseBytes)
	cfg.BaseBackoff = cmp.Or(cfg.BaseBackoff, DefaultBaseBackoff)
	cfg.MaxBackoff = cmp.Or(cfg.MaxBackoff, DefaultMaxBackoff)
	client, err := upstream.NewClient(cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("configure node: %w", err)
	}
	shown := make([]string, len(cfg.Endpoints))
	for i, e := range cfg.Endpoints {
		shown[i] = httpcall.RedactURL(e)
	}
	return &Node{client: client, shown: strings.Join(shown, ",")}, nil
}

// Answer posts body and returns the node's response body.
func (n *Node) Answer(ctx context.Context, body []byte) ([]byte, error) {
	out, err := n.client.Post(ctx, body)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, upstream.ErrUnavailable):
		return nil, fmt.Errorf("%w: %s: %w", ErrUnreachable, n.shown, err)
	case err != nil:
		return nil, err
	}
	return out, nil
}
