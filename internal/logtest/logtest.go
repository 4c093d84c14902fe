// Package logtest captures output (a logger's, a process's) in tests that
// read it while it is still written.
package logtest

import (
	"bytes"
	"log/slog"
	"sync"
)

// Buffer is log (or a process's) output that may be read while it is
// written.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Logger returns a text logger writing to b.
func (b *Buffer) Logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
