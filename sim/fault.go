package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/nearline/nearline/near"
)

// faults is the fault-injection middleware: latency, HTTP 5xx, JSON-RPC
// INTERNAL_ERROR, malformed and truncated bodies, stalls and HTTP 429 rate
// limiting. Its random stream is its own, so faults never change the chain.
type faults struct {
	cfg  FaultConfig
	next http.Handler

	mu     sync.Mutex
	rng    *rand.Rand
	tokens float64
	last   time.Time
}

// Fault kinds, in the order their fractions are laid out on [0, 1).
const (
	faultNone = iota
	fault5xx
	faultInternal
	faultMalformed
	faultTruncated
	faultStall
)

// maxFaultBody bounds the request body the middleware buffers (rpcserve's
// own limit is 10 MiB; one byte more lets it see an oversized body).
const maxFaultBody = 10<<20 + 1

func newFaults(cfg FaultConfig, next http.Handler) http.Handler {
	if cfg.Latency == 0 && cfg.LatencyJitter == 0 && cfg.RateLimit == 0 &&
		cfg.Fail5xx+cfg.FailInternal+cfg.FailMalformed+cfg.FailTruncated+cfg.Stall == 0 {
		return next
	}
	return &faults{cfg: cfg, next: next, rng: newRand(cfg.Seed, streamFaults), tokens: cfg.RateLimit}
}

// draw picks this request's fault and extra latency; limited reports a
// rate-limit refusal.
func (f *faults) draw(now time.Time) (kind int, delay time.Duration, status int, limited bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cfg.RateLimit > 0 {
		if !f.last.IsZero() {
			f.tokens += now.Sub(f.last).Seconds() * f.cfg.RateLimit
			f.tokens = min(f.tokens, max(f.cfg.RateLimit, 1))
		}
		f.last = now
		if f.tokens < 1 {
			return faultNone, 0, 0, true
		}
		f.tokens--
	}
	delay = f.cfg.Latency
	if f.cfg.LatencyJitter > 0 {
		delay += time.Duration(f.rng.Int64N(int64(f.cfg.LatencyJitter) + 1))
	}
	u := f.rng.Float64()
	status = []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}[f.rng.IntN(3)]
	for i, frac := range []float64{f.cfg.Fail5xx, f.cfg.FailInternal, f.cfg.FailMalformed, f.cfg.FailTruncated, f.cfg.Stall} {
		if u < frac {
			return i + 1, delay, status, false
		}
		u -= frac
	}
	return faultNone, delay, status, false
}

func (f *faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kind, delay, status, limited := f.draw(time.Now())
	if limited {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "rate limit exceeded", http.StatusTooManyRequests)
		return
	}
	// Read the body first: net/http notices a client that went away only
	// once the body is consumed, and a stall must end with the client.
	body, err := io.ReadAll(io.LimitReader(r.Body, maxFaultBody))
	if err != nil {
		http.Error(w, "read request", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if delay > 0 && !wait(r, delay) {
		return
	}
	switch kind {
	case fault5xx:
		http.Error(w, "simulated upstream failure", status)
	case faultInternal:
		writeInternalError(w, r)
	case faultMalformed:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `<html><body>502 Bad Gateway</body></html>{"jsonrpc":"2.0",`)
	case faultTruncated:
		rec := httptest.NewRecorder()
		f.next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body[:len(body)/2])
	case faultStall:
		if wait(r, f.cfg.StallDuration) {
			http.Error(w, "simulated stall ended", http.StatusGatewayTimeout)
		}
	default:
		f.next.ServeHTTP(w, r)
	}
}

// wait pauses for d or until the client goes away; it reports whether the
// client is still there.
func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// writeInternalError answers with NEAR's INTERNAL_ERROR envelope, echoing
// the request id when the body carries one.
func writeInternalError(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	id := near.DefaultID()
	if json.Unmarshal(bytes.TrimSpace(body), &req) == nil && len(req.ID) > 0 {
		id = req.ID
	}
	resp := near.Response{JSONRPC: "2.0", Error: near.InternalError("simulated internal error"), ID: id}
	b, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
