package rpcserve

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nearline/nearline/internal/httpcall"
)

// Config holds the protocol layer's limits and options. The zero value is
// usable: every zero field takes the default documented on it.
type Config struct {
	// MaxBodyBytes caps a request body; a larger body is answered with a
	// PARSE_ERROR envelope and HTTP 413, from its Content-Length before any
	// of it is read when it declares one (so `Expect: 100-continue` gets
	// the 413 at once). Default DefaultMaxBodyBytes: 10 MiB, nearcore's
	// JSON payload limit.
	MaxBodyBytes int64
	// MaxBodyMemory caps the bytes of request bodies held at once. A body
	// larger than SmallBodyBytes is read only once its length (for a body
	// of unknown length, MaxBodyBytes) is reserved from it, waiting at most
	// QueueWait (then HTTP 503, nothing read); the reservation lasts until
	// the request is answered. A batch's answers take room from it too: an
	// item whose answer finds none is answered "server busy" and the rest
	// of the batch is not run. Smaller bodies are bounded by the number of
	// connections instead. It must be at least MaxBodyBytes. Default the
	// larger of DefaultMaxBodyMemory (64 MiB) and MaxBodyBytes.
	MaxBodyMemory int64
	// MaxBatch caps the number of requests in one batch: the body's array
	// is walked only up to MaxBatch + 1 items, and a longer one gets a
	// PARSE_ERROR. Default 100.
	MaxBatch int
	// MaxListItems caps every list in a request's params (account_ids and
	// keys of the changes methods, positional params): params holding a
	// longer one get a PARSE_ERROR before they are read, found by one scan
	// that stops at the first list past the limit. nearcore has no such
	// limit (only its 10 MiB body); Default DefaultMaxListItems.
	MaxListItems int
	// MaxResponseBytes caps what one batch answers, as go-ethereum's
	// batchResponseMaxSize: items are answered in order until their answers
	// add up to more than this; every item after that is not run and is
	// answered with a PARSE_ERROR envelope (with its id) saying the response
	// is too large. So a batch's body holds at most this, one more answer
	// and those error envelopes. One answer is never refused for its own
	// size, and a request that is not a batch is not capped: what one method
	// returns is bounded by the method (view_state by the archive's view
	// state limit). Default 25 MiB (go-ethereum's).
	MaxResponseBytes int64
	// RequestTimeout bounds the handling of one HTTP request (a whole
	// batch included). Default 30s.
	RequestTimeout time.Duration
	// MaxConcurrent caps HTTP requests handled at once (their bodies read
	// and waiting for a slot are not counted). Default DefaultMaxConcurrent.
	MaxConcurrent int
	// QueueWait is how long a request waits for a slot beyond MaxConcurrent,
	// or for room in MaxBodyMemory, before it is answered with a "server
	// busy" error and HTTP 503. Default 1s.
	QueueWait time.Duration
	// APIKeys, when non-empty, makes every request carry one of these keys
	// as the first path segment ("/<api-key>/..."). Default: none (open).
	APIKeys []string
	// Forward is an upstream NEAR RPC URL (http or https) that receives the
	// requests this server cannot answer. Default "": such requests get an
	// error saying so.
	Forward string
	// ForwardBearerToken, when set, goes with every forwarded request as
	// the header Authorization: Bearer <token> (the API key of the
	// Forward endpoint, as upstream.Config.BearerToken), and is never
	// shown; it must be visible ASCII (httpcall.CheckBearer). Default:
	// none.
	ForwardBearerToken string
	// ForwardTimeout bounds one forwarded request. Default 30s.
	ForwardTimeout time.Duration
	// MaxForwardResponseBytes caps an upstream response; a longer one is
	// answered as an upstream failure. Default 16 MiB.
	MaxForwardResponseBytes int64
	// MaxForwards caps the forwarded calls in flight at once (a call
	// beyond it waits for one at most QueueWait, then gets "server busy"),
	// and the calls one HTTP request forwards: a batch's items past it get
	// an error instead of being forwarded. So forwarded answers being read
	// hold at most MaxForwards × MaxForwardResponseBytes (twice that while
	// one of unknown length grows), and the operator's bearer token goes
	// upstream at most that often per request. Default DefaultMaxForwards.
	MaxForwards int
	// CORSOrigins are the origins browsers may call from ("*" for any), as
	// nearcore's cors_allowed_origins. Default ["*"], nearcore's default.
	CORSOrigins []string
	// Metrics, when set, records every request and is served at GET
	// /metrics. Default: none.
	Metrics *Metrics
}

// Defaults of Config's fields.
const (
	DefaultMaxBodyBytes            = 10 << 20
	DefaultMaxBodyMemory           = 64 << 20
	DefaultMaxBatch                = 100
	DefaultMaxListItems            = 2048
	DefaultMaxResponseBytes        = 25 << 20
	DefaultRequestTimeout          = 30 * time.Second
	DefaultMaxConcurrent           = 32
	DefaultQueueWait               = time.Second
	DefaultForwardTimeout          = 30 * time.Second
	DefaultMaxForwardResponseBytes = 16 << 20
	DefaultMaxForwards             = 4
)

// SmallBodyBytes is the largest body read without a reservation from
// Config.MaxBodyMemory: the memory of such bodies is bounded by the
// server's connection limit (ServeConfig.MaxConnections).
const SmallBodyBytes = 64 << 10

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	c.MaxBodyBytes = cmp.Or(c.MaxBodyBytes, DefaultMaxBodyBytes)
	c.MaxBodyMemory = cmp.Or(c.MaxBodyMemory, max(DefaultMaxBodyMemory, c.MaxBodyBytes))
	c.MaxBatch = cmp.Or(c.MaxBatch, DefaultMaxBatch)
	c.MaxListItems = cmp.Or(c.MaxListItems, DefaultMaxListItems)
	c.MaxResponseBytes = cmp.Or(c.MaxResponseBytes, DefaultMaxResponseBytes)
	c.RequestTimeout = cmp.Or(c.RequestTimeout, DefaultRequestTimeout)
	c.MaxConcurrent = cmp.Or(c.MaxConcurrent, DefaultMaxConcurrent)
	c.QueueWait = cmp.Or(c.QueueWait, DefaultQueueWait)
	c.ForwardTimeout = cmp.Or(c.ForwardTimeout, DefaultForwardTimeout)
	c.MaxForwardResponseBytes = cmp.Or(c.MaxForwardResponseBytes, DefaultMaxForwardResponseBytes)
	c.MaxForwards = cmp.Or(c.MaxForwards, DefaultMaxForwards)
	if len(c.CORSOrigins) == 0 {
		c.CORSOrigins = []string{"*"}
	}
	return c
}

// Validate reports whether c (after defaults) is usable; NewHandler returns
// the same error.
func (c Config) Validate() error { return c.withDefaults().validate() }

func (c Config) validate() error {
	errs := []error{
		negative("max body bytes", c.MaxBodyBytes),
		negative("max batch", c.MaxBatch),
		negative("max list items", c.MaxListItems),
		negative("max response bytes", c.MaxResponseBytes),
		negative("request timeout", c.RequestTimeout),
		negative("max concurrent", c.MaxConcurrent),
		negative("queue wait", c.QueueWait),
		negative("forward timeout", c.ForwardTimeout),
		negative("max forward response bytes", c.MaxForwardResponseBytes),
		negative("max forwards", c.MaxForwards),
	}
	if c.MaxBodyMemory < c.MaxBodyBytes {
		errs = append(errs, fmt.Errorf("max body memory %d is below max body bytes %d: a largest body could never be read", c.MaxBodyMemory, c.MaxBodyBytes))
	}
	for i, k := range c.APIKeys {
		if strings.TrimSpace(k) == "" || strings.ContainsAny(k, "/?#% ") {
			// The key itself is not repeated: it is a secret.
			errs = append(errs, fmt.Errorf("api key #%d is blank or holds a character not allowed in a path segment (/?#%% or a space)", i+1))
		}
	}
	if c.Forward != "" {
		if _, ok := httpcall.ParseHTTP(c.Forward); !ok {
			errs = append(errs, fmt.Errorf("forward url %q is not an absolute http(s) url", httpcall.RedactURL(c.Forward)))
		}
	}
	if err := httpcall.CheckBearer(c.ForwardBearerToken); err != nil {
		errs = append(errs, fmt.Errorf("forward bearer token: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid rpcserve config: %w", err)
	}
	return nil
}

// negative is the error of a setting below zero, nil otherwise.
func negative[T int | int64 | time.Duration](name string, v T) error {
	if v < 0 {
		return fmt.Errorf("%s %v is negative", name, v)
	}
	return nil
}
