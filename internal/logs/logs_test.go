package logs_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/logs"
)

func TestOrDiscard(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	given := slog.New(slog.NewTextHandler(&buf, nil))
	require.Same(t, given, logs.OrDiscard(given))
	logs.OrDiscard(nil).Error("dropped") // must not panic
	require.False(t, logs.OrDiscard(nil).Enabled(t.Context(), slog.LevelError))
}

// TestAtDebug: every record is written at debug level, and only when the
// handler takes debug records.
func TestAtDebug(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logs.AtDebug(slog.New(slog.NewTextHandler(&buf, nil))).With("url", "u").Error("dropped")
	require.Empty(t, buf.String(), "an info handler takes no debug record")
	logs.AtDebug(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))).WithGroup("g").Error("failed", "n", 1)
	require.Contains(t, buf.String(), `level=DEBUG msg=failed g.n=1`)
}
