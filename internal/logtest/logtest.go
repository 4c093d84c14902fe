// Package logtest captures a logger's output in tests that read it while
// goroutines still log.
package logtest

import (
	"bytes"
	"log/slog"
	"sync"
)

// Buffer is log output that may be read while it is written.
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
