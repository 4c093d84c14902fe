package rpcserve

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/near"
)

// handler is the http.Handler NewHandler returns.
type handler struct {
	backend Backend
	cfg     Config
	logger  *slog.Logger
	methods map[string]methodFunc
	slots   chan struct{}
	bodies  *bodyMemory
	forward *forwarder // nil without Config.Forward
}

// NewHandler returns the JSON-RPC handler answering from b. A zero Config
// field takes its documented default; an invalid Config is an error. A nil
// logger discards logs.
func NewHandler(b Backend, cfg Config, logger *slog.Logger) (http.Handler, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	logger = logs.OrDiscard(logger)
	h := &handler{
		backend: b,
		cfg:     cfg,
		logger:  logger,
		methods: methodTable(),
		slots:   make(chan struct{}, cfg.MaxConcurrent),
		bodies:  newBodyMemory(cfg.MaxBodyMemory, cfg.QueueWait),
	}
	if cfg.Forward != "" {
		h.forward = newForwarder(cfg)
	}
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.logger.Error("rpc handler panicked", "panic", p, "stack", string(debug.Stack()))
			writeJSON(w, http.StatusInternalServerError, h.errorResponse(nil, genericInternal()))
		}
	}()
	if h.cors(w, r) {
		return
	}
	rest, ok := h.authorize(r.URL.Path)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, h.errorResponse(nil, unauthorized()))
		return
	}
	target := strings.Trim(rest, "/")
	if strings.Contains(target, "/") {
		writeJSON(w, http.StatusNotFound, h.errorResponse(nil, near.MethodNotFound(target)))
		return
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet:
		if target == "metrics" && h.cfg.Metrics != nil {
			h.cfg.Metrics.Handler().ServeHTTP(w, r)
			return
		}
		if target != "status" && target != "health" {
			w.Header().Set("Allow", "POST")
			writeJSON(w, http.StatusMethodNotAllowed, h.errorResponse(nil, near.ParseError("Use POST for JSON-RPC requests; GET serves only /status and /health")))
			return
		}
	default:
		w.Header().Set("Allow", "GET, POST, OPTIONS")
		writeJSON(w, http.StatusMethodNotAllowed, h.errorResponse(nil, near.ParseError("Use POST for JSON-RPC requests")))
		return
	}

	// The body is read before taking a concurrency slot, so a slow client
	// holds no slot, and into MaxBodyMemory as its bytes arrive.
	var body []byte
	var res *reservation
	if r.Method == http.MethodPost {
		if body, res, ok = h.readBody(w, r); !ok {
			return
		}
		defer res.release()
	}

	release, ok := h.acquire(r.Context())
	if !ok {
		h.busy(w)
		return
	}
	ctx, cancel := context.WithTimeout(withForwardCount(r.Context()), h.cfg.RequestTimeout)
	defer cancel()

	if r.Method == http.MethodGet {
		defer release()
		h.serveGet(ctx, w, target)
		return
	}
	answer := h.handleBody(ctx, body, target, res)
	// The slot is free before the answer is written, so a client that
	// reads slowly holds none; the answer stays in the body memory until
	// written, within its write deadline.
	release()
	if !res.resize(ctx, int64(len(answer))) {
		h.logger.Warn("rpc answer refused: no room for it in the body memory", "answer_bytes", len(answer), "max_body_memory", h.cfg.MaxBodyMemory)
		h.busy(w)
		return
	}
	send(w, http.StatusOK, answer)
}

// Bodies and answers travel at least at minSendRate after sendGrace: a
// client that sends its body or reads its answer slower is cut off, so it
// holds a connection and its bytes of the body memory for a bounded time.
const (
	sendGrace   = 10 * time.Second
	minSendRate = 128 << 10 // bytes per second
	bodyChunk   = 64 << 10  // the first read of a body; it grows by doubling
)

// sendTime is the time n bytes may take to travel.
func sendTime(n int64) time.Duration {
	return sendGrace + time.Duration(n)*time.Second/minSendRate
}

// send writes an answer within its write deadline (sendTime of its size).
func send(w http.ResponseWriter, status int, body []byte) {
	// Not every ResponseWriter has deadlines (a test's recorder); the
	// server's WriteTimeout still bounds those that lack one.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(sendTime(int64(len(body)))))
	writeJSON(w, status, body)
}

// readBody reads a POST body within MaxBodyBytes and MaxBodyMemory, or
// answers the request itself (ok false): 413 for a body over the limit,
// from its declared length before anything is read; 503 when the memory
// budget has no room for the next bytes within the queue wait; 400 when it
// cannot be read or arrives slower than minSendRate. Memory is reserved as
// the bytes arrive (the buffer doubles, from bodyChunk, up to the declared
// length), never for a length only declared; the reservation holds the
// body's bytes until released.
func (h *handler) readBody(w http.ResponseWriter, r *http.Request) (body []byte, res *reservation, ok bool) {
	if r.ContentLength > h.cfg.MaxBodyBytes {
		// Not a byte read, so a client that sent `Expect: 100-continue`
		// gets the 413 instead of a 100 Continue.
		w.Header().Set("Connection", "close")
		h.tooLarge(w)
		return nil, nil, false
	}
	limit := h.cfg.MaxBodyBytes + 1 // room to see a body of unknown length pass the limit
	if r.ContentLength >= 0 {
		limit = r.ContentLength
	}
	rc := http.NewResponseController(w)
	// The handler's own work is bounded by RequestTimeout; a read deadline
	// left behind would cancel it.
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	started := time.Now()
	res = h.bodies.empty()
	limited := http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes)
	buf := make([]byte, 0, min(limit, bodyChunk))
	var err error
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			next := min(limit, max(2*int64(cap(buf)), bodyChunk))
			if !res.ensure(r.Context(), next) {
				res.release()
				h.logger.Warn("rpc request refused: no room for its body in the body memory", "body_bytes", next, "max_body_memory", h.cfg.MaxBodyMemory)
				_ = rc.SetReadDeadline(started.Add(sendTime(limit)))
				discardBody(r, h.cfg.MaxBodyBytes)
				h.busy(w)
				return nil, nil, false
			}
			buf = append(make([]byte, 0, next), buf...)
		}
		_ = rc.SetReadDeadline(started.Add(sendTime(int64(len(buf)) + bodyChunk)))
		var n int
		n, err = limited.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			break
		}
	}
	if err == nil || errors.Is(err, io.EOF) {
		return buf, res, true
	}
	res.release()
	// The rest of the body is not read: without this, the server would
	// try to, with no deadline left, before writing the answer.
	w.Header().Set("Connection", "close")
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooLarge):
		h.tooLarge(w)
	case errors.As(err, &netErr) && netErr.Timeout():
		h.logger.Debug("request body arrived too slowly", "body_bytes", len(buf), "elapsed", time.Since(started))
		writeJSON(w, http.StatusRequestTimeout, h.errorResponse(nil, near.ParseError(fmt.Sprintf(
			"The request body arrived too slowly: send at least %d bytes a second after the first %s", minSendRate, sendGrace))))
	default:
		h.logger.Debug("read request body", "err", err)
		writeJSON(w, http.StatusBadRequest, h.errorResponse(nil, near.ParseError("Could not read the request body")))
	}
	return nil, nil, false
}

// discardBody reads the body of a refused request through a small buffer,
// so that a client still sending it gets the answer instead of a reset,
// unless the client waits for 100 Continue before sending (then nothing
// was sent). The server's ReadTimeout bounds a slow sender.
func discardBody(r *http.Request, limit int64) {
	if strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, limit))
}

func (h *handler) tooLarge(w http.ResponseWriter) {
	writeJSON(w, http.StatusRequestEntityTooLarge, h.errorResponse(nil, near.ParseError(
		"Request body is larger than the limit of "+itoa(h.cfg.MaxBodyBytes)+" bytes")))
}

// busy answers 503: no slot or no room for the body in time.
func (h *handler) busy(w http.ResponseWriter) {
	h.cfg.Metrics.refused()
	w.Header().Set("Retry-After", "1")
	writeJSON(w, http.StatusServiceUnavailable, h.errorResponse(nil, serverBusy()))
}

// cors sets the CORS headers for an allowed Origin and answers a preflight
// (OPTIONS) request itself, returning true.
func (h *handler) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	allowed := ""
	for _, o := range h.cfg.CORSOrigins {
		if o == "*" || (origin != "" && o == origin) {
			allowed = o
			break
		}
	}
	if origin != "" && allowed != "" {
		w.Header().Set("Access-Control-Allow-Origin", allowed)
		if allowed != "*" {
			w.Header().Add("Vary", "Origin")
		}
	}
	if r.Method != http.MethodOptions {
		return false
	}
	if origin != "" && allowed != "" {
		headers := r.Header.Get("Access-Control-Request-Headers")
		if headers == "" {
			headers = "Content-Type"
		}
		w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		w.Header().Set("Access-Control-Allow-Headers", headers)
		w.Header().Set("Access-Control-Max-Age", "3600")
	}
	w.Header().Set("Allow", "GET, POST, OPTIONS")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// authorize strips and checks the API key when keys are configured. It
// returns the rest of the path.
func (h *handler) authorize(path string) (string, bool) {
	if len(h.cfg.APIKeys) == 0 {
		return path, true
	}
	trimmed := strings.TrimPrefix(path, "/")
	key, rest, _ := strings.Cut(trimmed, "/")
	match := 0
	for _, k := range h.cfg.APIKeys {
		match |= subtle.ConstantTimeCompare([]byte(k), []byte(key))
	}
	return "/" + rest, match == 1
}

// acquire takes a concurrency slot, waiting at most QueueWait.
func (h *handler) acquire(ctx context.Context) (func(), bool) {
	select {
	case h.slots <- struct{}{}:
		return func() { <-h.slots }, true
	default:
	}
	timer := time.NewTimer(h.cfg.QueueWait)
	defer timer.Stop()
	select {
	case h.slots <- struct{}{}:
		return func() { <-h.slots }, true
	case <-timer.C:
		h.logger.Warn("rpc request refused: too many concurrent requests", "max_concurrent", h.cfg.MaxConcurrent)
		return nil, false
	case <-ctx.Done():
		return nil, false
	}
}

// serveGet answers GET /status (the bare status object) and GET /health
// (200 with an empty body, or 503), as nearcore does.
func (h *handler) serveGet(ctx context.Context, w http.ResponseWriter, target string) {
	if target == "health" {
		if err := h.backend.Health(ctx); err != nil {
			h.logger.Debug("health check failed", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	status, err := h.backend.Status(ctx)
	if err == nil {
		var buf bytes.Buffer
		if err = compactInto(&buf, status); err == nil {
			send(w, http.StatusOK, buf.Bytes())
			return
		}
	}
	writeJSON(w, http.StatusServiceUnavailable, h.fail(ctx, call{method: "status", id: near.DefaultID()}, err))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body) // a client that went away is not our error
}
