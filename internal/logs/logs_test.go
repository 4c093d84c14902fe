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
