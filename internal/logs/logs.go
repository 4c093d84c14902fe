// Package logs holds what the packages' constructors share about the
// logger they are given: every constructor takes its *slog.Logger as a
// parameter, and nil means no logging.
package logs

import (
	"context"
	"log/slog"
)

// OrDiscard returns logger, or a logger that discards everything when it
// is nil.
func OrDiscard(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return logger
}

// AtDebug is logger with every record at debug level: for the upstream
// clients, whose line per failed attempt would flood an outage that
// outage.Tracker says in two lines (nearline_upstream_errors_total counts
// every failed attempt).
func AtDebug(logger *slog.Logger) *slog.Logger {
	return slog.New(debugHandler{logger.Handler()})
}

type debugHandler struct{ next slog.Handler }

func (h debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return h.next.Enabled(ctx, slog.LevelDebug)
}

func (h debugHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return h.next.Handle(ctx, r)
}

func (h debugHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return debugHandler{h.next.WithAttrs(attrs)}
}

func (h debugHandler) WithGroup(name string) slog.Handler {
	return debugHandler{h.next.WithGroup(name)}
}
