// Package logs holds what the packages' constructors share about the
// logger they are given: every constructor takes its *slog.Logger as a
// parameter, and nil means no logging.
package logs

import "log/slog"

// OrDiscard returns logger, or a logger that discards everything when it
// is nil.
func OrDiscard(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return logger
}
