package upstream

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nearline/nearline/internal/bounds"

	"github.com/nearline/nearline/internal/bufpool"
	"github.com/nearline/nearline/internal/httpcall"
	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/internal/retry"
	"github.com/nearline/nearline/near"
)

// ErrNeedsArchival is returned (wrapped) when every upstream has
// garbage-collected the block a request needs: only an archival node can
// answer it.
var ErrNeedsArchival = errors.New("needs an archival node")

// ErrUnavailable is returned (wrapped) when every attempt of a call failed
// in a way a later attempt may not: the upstream timed out, refused the
// connection, answered 5xx, 429, INTERNAL_ERROR or NOT_SYNCED_YET, or a
// malformed body. A caller that must outlive an outage retries on it.
var ErrUnavailable = errors.New("upstream unavailable")

// Error kinds the client reports to Config.OnError.
const (
	FailTimeout    = "timeout"
	FailTransport  = "transport"
	FailHTTP5xx    = "http_5xx"
	FailHTTP429    = "http_429"
	FailHTTPOther  = "http_other"
	FailMalformed  = "malformed"
	FailInternal   = "internal_error"
	FailNotSynced  = "not_synced"
	FailGarbageCol = "garbage_collected"
)

// Defaults of Config.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxAttempts      = 8
	DefaultBaseBackoff      = 100 * time.Millisecond
	DefaultMaxBackoff       = 5 * time.Second
	DefaultMaxResponseBytes = 512 << 20
)

// Config configures a Client. Only Endpoints is required.
type Config struct {
	// Endpoints are the upstream JSON-RPC URLs (a Getter's base URLs),
	// tried in order on failure. A URL may carry a query, such as an API
	// key (https://host?apiKey=KEY), which every request keeps; log lines
	// and errors show it redacted (httpcall.RedactURL).
	Endpoints []string
	// BearerToken, when set, goes with every request to Endpoints as the
	// header Authorization: Bearer <token> (FastNEAR's API key, which its
	// RPC and neardata take so), and to nothing else: a Getter follows no
	// redirect, and the Client's HTTP client drops the header on a
	// redirect to another host (net/http's rule). It is never logged nor
	// shown, and must be visible ASCII (httpcall.CheckBearer). Default:
	// none.
	BearerToken string
	// Timeout bounds one HTTP request. Default DefaultTimeout.
	Timeout time.Duration
	// MaxAttempts bounds the attempts of one call across all endpoints.
	// Default DefaultMaxAttempts.
	MaxAttempts int
	// BaseBackoff is the first retry's backoff ceiling; it doubles per retry
	// up to MaxBackoff, and the wait is drawn uniformly below it (full
	// jitter). Defaults DefaultBaseBackoff and DefaultMaxBackoff.
	BaseBackoff, MaxBackoff time.Duration
	// MaxResponseBytes bounds a response body. Default
	// DefaultMaxResponseBytes (512 MiB).
	MaxResponseBytes int64
	// HTTPClient sends the requests. Default: a client without its own
	// timeout (Timeout applies per request).
	HTTPClient *http.Client
	// Buffers, when set, holds the buffers large response bodies are read
	// into (httpcall.Client.Buffers): an Answer's Body may then be one,
	// owned by the accept it is handed to. Default: none.
	Buffers *bufpool.Pool
	// RequestRate bounds a Getter's requests to this many a second, over
	// all its endpoints (retries included); a 429's Retry-After pauses
	// them all. 0: no bound. (Client calls are bounded by their callers'
	// concurrency instead.)
	RequestRate float64
	// OnError, when set, is told the kind (Fail*) of every failed attempt
	// that is retried or failed over (not of NEAR errors returned to the
	// caller, such as UNKNOWN_BLOCK).
	OnError func(kind string)
}

func (c Config) withDefaults() Config {
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, DefaultMaxAttempts)
	c.BaseBackoff = cmp.Or(c.BaseBackoff, DefaultBaseBackoff)
	c.MaxBackoff = cmp.Or(c.MaxBackoff, DefaultMaxBackoff)
	c.MaxResponseBytes = cmp.Or(c.MaxResponseBytes, DefaultMaxResponseBytes)
	if c.HTTPClient == nil {
		transport := &http.Transport{Proxy: http.ProxyFromEnvironment}
		if def, ok := http.DefaultTransport.(*http.Transport); ok {
			transport = def.Clone()
		}
		transport.MaxIdleConnsPerHost = 64 // many calls in flight to few hosts
		c.HTTPClient = &http.Client{Transport: transport}
	}
	if c.OnError == nil {
		c.OnError = func(string) {}
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	if len(c.Endpoints) == 0 {
		errs = append(errs, errors.New("no upstream endpoint"))
	}
	for _, e := range c.Endpoints {
		_, err := parseEndpoint(e)
		errs = append(errs, err)
	}
	if err := httpcall.CheckBearer(c.BearerToken); err != nil {
		errs = append(errs, fmt.Errorf("bearer token: %w", err))
	}
	return errors.Join(append(errs,
		bounds.AtLeast("max attempts", c.MaxAttempts, 1),
		bounds.NotNegative("timeout", c.Timeout),
		bounds.NotNegative("base backoff", c.BaseBackoff),
		bounds.AtLeast("max backoff", c.MaxBackoff, c.BaseBackoff),
		bounds.NotNegative("request rate", c.RequestRate),
	)...)
}

// exchange is how c's requests go: its HTTP client, its key as a Bearer
// header, its bound on a response.
func (c Config) exchange() httpcall.Client {
	return httpcall.Client{HTTP: c.HTTPClient, Bearer: c.BearerToken, Limit: c.MaxResponseBytes, Buffers: c.Buffers}
}

// parseEndpoint parses an upstream URL, which must be an absolute http://
// or https:// URL; its error shows the URL redacted.
func parseEndpoint(raw string) (*url.URL, error) {
	u, ok := httpcall.ParseHTTP(raw)
	if !ok {
		return nil, fmt.Errorf("upstream %q: want an absolute http:// or https:// URL", httpcall.RedactURL(raw))
	}
	return u, nil
}

// shown is endpoint idx as log lines and errors show it.
func (c Config) shown(idx int) string { return httpcall.RedactURL(c.Endpoints[idx]) }

// Client calls NEAR JSON-RPC methods on one or more upstream nodes with
// per-request timeouts, retries with exponential backoff and jitter, and
// failover between endpoints. It is safe for concurrent use.
type Client struct {
	cfg       Config
	http      httpcall.Client // cfg's HTTP client, key and body bound
	logger    *slog.Logger    // retries
	nextID    atomic.Uint64
	preferred atomic.Int64 // endpoint that answered last

	mu       sync.Mutex
	earliest map[int]earliestInfo // endpoint index -> earliest available height
}

type earliestInfo struct {
	height uint64
	at     time.Time
}

// NewClient returns a client for cfg; logger receives the retries (nil:
// none).
func NewClient(cfg Config, logger *slog.Logger) (*Client, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("configure upstream client: %w", err)
	}
	return &Client{cfg: cfg, http: cfg.exchange(), logger: logs.OrDiscard(logger), earliest: map[int]earliestInfo{}}, nil
}

// attemptError is one failed attempt: its kind and whether another attempt
// (here or elsewhere) may succeed.
type attemptError struct {
	kind       string
	retryable  bool
	err        error
	retryAfter time.Duration // from a 429's Retry-After header
}

func failed(kind string, retryable bool, err error) *attemptError {
	return &attemptError{kind: kind, retryable: retryable, err: err}
}

// rateLimited is the failure of a 429, which waits what its Retry-After
// asks (a wait of 0 leaves the backoff's).
func rateLimited(resp httpcall.Response) *attemptError {
	ae := failed(FailHTTP429, true, fmt.Errorf("http %d", resp.StatusCode))
	ae.retryAfter, _ = resp.RetryAfter()
	return ae
}

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

// Call invokes method with params (encoded as JSON; nil omits them) and
// decodes the result into result (nil discards it). A NEAR error the caller
// should see is returned as a *near.Error (use errors.As).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	var body json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("encode %s params: %w", method, err)
		}
		body = b
	}
	raw, err := c.call(ctx, method, body)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("decode %s result: %w", method, err)
	}
	return nil
}

// CallRaw is Call returning the result as served.
func (c *Client) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var body json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("encode %s params: %w", method, err)
		}
		body = b
	}
	return c.call(ctx, method, body)
}

func (c *Client) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	gcd := map[int]uint64{} // endpoints that garbage-collected the block, with their earliest height
	var raw json.RawMessage
	err := c.cfg.failover(ctx, c.logger, &c.preferred, "call "+method, "upstream call failed, retrying", []any{"method", method}, func(idx int) (err error) {
		raw, err = c.attempt(ctx, idx, method, params)
		if ae, ok := errors.AsType[*attemptError](err); ok {
			if earliest, gc := c.garbageCollected(ctx, idx, ae, params); gc {
				c.cfg.OnError(FailGarbageCol)
				gcd[idx] = earliest
				return errNextEndpoint // an archival endpoint may have it
			}
		}
		return err
	})
	if errors.Is(err, errEveryEndpoint) {
		var parts []string
		for idx, h := range gcd {
			parts = append(parts, fmt.Sprintf("%s keeps blocks from %d", c.cfg.shown(idx), h))
		}
		return nil, fmt.Errorf("call %s %s: block garbage-collected on every upstream (%s): %w",
			method, params, strings.Join(parts, ", "), ErrNeedsArchival)
	}
	return raw, err
}

// backoff is the wait before a retry: uniform in [0, min(MaxBackoff,
// BaseBackoff*2^(attempt-1))) (full jitter), or a server's Retry-After
// (capped at MaxBackoff) when that is longer.
func (c Config) backoff() retry.Backoff {
	return retry.Backoff{Base: c.BaseBackoff, Max: c.MaxBackoff, Jitter: retry.Full}
}

// attempt sends one request to endpoint idx.
func (c *Client) attempt(ctx context.Context, idx int, method string, params json.RawMessage) (json.RawMessage, error) {
	id := c.nextID.Add(1)
	req := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      string          `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", fmt.Sprintf("nearline-%d", id), method, params}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	reqCtx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, err := c.http.PostJSON(reqCtx, c.cfg.Endpoints[idx], body)
	if err != nil {
		return nil, classifyTransport(ctx, err)
	}
	data := resp.Body
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, rateLimited(resp)
	case resp.StatusCode >= 500 && len(data) == 0:
		return nil, failed(FailHTTP5xx, true, fmt.Errorf("http %d", resp.StatusCode))
	}
	if resp.TooLarge {
		return nil, failed(FailMalformed, false, fmt.Errorf("response larger than %d bytes", c.cfg.MaxResponseBytes))
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *near.Error     `json:"error"`
	}
	if err := json.Unmarshal(data, &env); err != nil || (env.Result == nil && env.Error == nil) {
		if resp.StatusCode >= 500 {
			return nil, failed(FailHTTP5xx, true, fmt.Errorf("http %d", resp.StatusCode))
		}
		if resp.StatusCode != http.StatusOK {
			return nil, failed(FailHTTPOther, resp.StatusCode == http.StatusRequestTimeout, fmt.Errorf("http %d", resp.StatusCode))
		}
		return nil, failed(FailMalformed, true, fmt.Errorf("malformed response body (%d bytes)", len(data)))
	}
	if env.Error != nil {
		return nil, classifyNEAR(env.Error)
	}
	return env.Result, nil
}

// Post sends body, a JSON-RPC request as the caller encoded it, and
// returns the response body as served, whatever it holds: a NEAR error
// envelope is an answer here, whatever its HTTP status, not a failure (a
// comparison needs the node's errors as they are). A transport failure, a
// timeout, 429, or a body that is not a JSON-RPC response is retried and
// failed over as Call's failures are; ErrUnavailable when they ran out.
func (c *Client) Post(ctx context.Context, body []byte) ([]byte, error) {
	var out []byte
	err := c.cfg.failover(ctx, c.logger, &c.preferred, "post", "upstream post failed, retrying", nil, func(idx int) (err error) {
		out, err = c.post(ctx, idx, body)
		return err
	})
	return out, err
}

// post sends one request body to endpoint idx.
func (c *Client) post(ctx context.Context, idx int, body []byte) ([]byte, error) {
	reqCtx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, err := c.http.PostJSON(reqCtx, c.cfg.Endpoints[idx], body)
	if err != nil {
		return nil, classifyTransport(ctx, err)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, rateLimited(resp)
	case resp.TooLarge:
		return nil, failed(FailMalformed, false, fmt.Errorf("response larger than %d bytes", c.cfg.MaxResponseBytes))
	case isResponse(resp.Body):
		return resp.Body, nil
	case resp.StatusCode >= 500:
		return nil, failed(FailHTTP5xx, true, fmt.Errorf("http %d", resp.StatusCode))
	}
	return nil, failed(FailMalformed, true, fmt.Errorf("http %d: not a JSON-RPC response (%d bytes)", resp.StatusCode, len(resp.Body)))
}

// isResponse reports whether body is a JSON-RPC response: an object with a
// result or an error that is not null.
func isResponse(body []byte) bool {
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	present := func(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
	return json.Unmarshal(body, &env) == nil && (present(env.Result) || present(env.Error))
}

func classifyTransport(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return failed(FailTimeout, true, fmt.Errorf("request timed out: %w", err))
	}
	return failed(FailTransport, true, err)
}

// classifyNEAR decides whether a NEAR error is worth retrying elsewhere.
func classifyNEAR(e *near.Error) error {
	switch {
	case e.Name == near.KindInternal || e.CauseName() == "INTERNAL_ERROR":
		return failed(FailInternal, true, e)
	case e.CauseName() == "NOT_SYNCED_YET" || e.CauseName() == "NO_SYNCED_BLOCKS":
		return failed(FailNotSynced, true, e)
	case e.CauseName() == "TIMEOUT_ERROR":
		return failed(FailTimeout, true, e)
	}
	return failed("near_"+strings.ToLower(e.CauseName()), false, e)
}

// garbageCollected reports whether a failed attempt means endpoint idx no
// longer has the block: GARBAGE_COLLECTED_BLOCK, or UNKNOWN_BLOCK for a
// block_id height below the endpoint's earliest available block.
func (c *Client) garbageCollected(ctx context.Context, idx int, ae *attemptError, params json.RawMessage) (uint64, bool) {
	var ne *near.Error
	if !errors.As(ae.err, &ne) {
		return 0, false
	}
	switch ne.CauseName() {
	case "GARBAGE_COLLECTED_BLOCK":
		earliest, _ := c.earliestHeight(ctx, idx)
		return earliest, true
	case "UNKNOWN_BLOCK":
	default:
		return 0, false
	}
	var ref struct {
		BlockID json.RawMessage `json:"block_id"`
	}
	if json.Unmarshal(params, &ref) != nil || len(ref.BlockID) == 0 {
		return 0, false
	}
	var id near.BlockID
	if json.Unmarshal(ref.BlockID, &id) != nil || !id.IsHeight() {
		return 0, false
	}
	earliest, ok := c.earliestHeight(ctx, idx)
	if !ok || id.Height >= earliest {
		return 0, false
	}
	return earliest, true
}

// earliestHeight returns the endpoint's earliest available block from its
// `status` (cached for a minute).
func (c *Client) earliestHeight(ctx context.Context, idx int) (uint64, bool) {
	c.mu.Lock()
	info, ok := c.earliest[idx]
	c.mu.Unlock()
	if ok && time.Since(info.at) < time.Minute {
		return info.height, true
	}
	raw, err := c.attempt(ctx, idx, "status", json.RawMessage("[]"))
	if err != nil {
		return 0, false
	}
	var st struct {
		SyncInfo struct {
			EarliestBlockHeight *uint64 `json:"earliest_block_height"`
		} `json:"sync_info"`
	}
	if json.Unmarshal(raw, &st) != nil || st.SyncInfo.EarliestBlockHeight == nil {
		return 0, false
	}
	c.mu.Lock()
	c.earliest[idx] = earliestInfo{height: *st.SyncInfo.EarliestBlockHeight, at: time.Now()}
	c.mu.Unlock()
	return *st.SyncInfo.EarliestBlockHeight, true
}
