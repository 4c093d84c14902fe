package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
)

// Target answers a JSON-RPC request body with a response body: the archive
// in-process (Archive) or a node over HTTP (Node).
type Target interface {
	Answer(ctx context.Context, body []byte) ([]byte, error)
}

// forwardedMarker is what the archive's forward upstream answers: a body
// no node sends, by which Archive.Answer's caller knows the archive would
// have forwarded the request.
var forwardedMarker = []byte(`{"nearline_verify":"forwarded"}`)

// IsForwarded reports whether an archive answer says the archive would
// have forwarded the request upstream instead of answering it.
func IsForwarded(body []byte) bool { return bytes.Equal(bytes.TrimSpace(body), forwardedMarker) }

// Archive answers requests in-process through the handler `nearline
// serve` uses over the same backend, so its answers are what serve sends.
// What the handler would forward upstream reaches a loopback listener of
// Archive's own, which answers a marker (IsForwarded).
type Archive struct {
	handler http.Handler
	server  *http.Server
	done    chan error
}

var _ Target = (*Archive)(nil)

// NewArchive serves backend through rpcserve with cfg (its Forward is
// replaced by Archive's marker listener). Close stops the listener.
func NewArchive(backend rpcserve.Backend, cfg rpcserve.Config, logger *slog.Logger) (*Archive, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for forwarded requests: %w", err)
	}
	a := &Archive{
		server: &http.Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(forwardedMarker)
			}),
			ReadHeaderTimeout: 10 * time.Second,
		},
		done: make(chan error, 1),
	}
	cfg.Forward = "http://" + ln.Addr().String()
	if a.handler, err = rpcserve.NewHandler(backend, cfg, logger); err != nil {
		ln.Close()
		return nil, fmt.Errorf("configure archive handler: %w", err)
	}
	go func() { a.done <- a.server.Serve(ln) }()
	return a, nil
}

// Answer runs the request through the archive's handler.
func (a *Archive) Answer(ctx context.Context, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build archive request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	a.handler.ServeHTTP(rec, req)
	if rec.code != http.StatusOK {
		return nil, fmt.Errorf("archive answered HTTP %d: %s", rec.code, near.ClipTo(rec.body.String(), 200))
	}
	return rec.body.Bytes(), nil
}

// Close stops the marker listener.
func (a *Archive) Close(ctx context.Context) error {
	if err := a.server.Shutdown(ctx); err != nil {
		return fmt.Errorf("stop forward listener: %w", err)
	}
	if err := <-a.done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("forward listener: %w", err)
	}
	return nil
}

// recorder is the in-memory http.ResponseWriter Answer hands the handler.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.code, r.wrote = code, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}
