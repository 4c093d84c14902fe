package rpcserve

import (
	"log/slog"
	"net/http"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine they started is still
// running when they end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newTestHandler is NewHandler for a config the test knows is valid.
func newTestHandler(t testing.TB, b Backend, cfg Config, logger *slog.Logger) http.Handler {
	t.Helper()
	h, err := NewHandler(b, cfg, logger)
	if err != nil {
		t.Fatalf("new handler: %v", err)
	}
	return h
}
