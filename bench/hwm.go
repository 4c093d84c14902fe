package main

import (
	"sync"
	"time"

	"github.com/nearline/nearline/internal/procstat"
)

// hwmWatch follows a child process's peak resident memory: VmHWM of
// /proc/<pid>/status, the high-water mark of its own address space, read
// every interval while it runs (it only grows, so the last reading is the
// peak up to within an interval of the exit). The child's rusage ru_maxrss
// is not that: a child started with vfork (os/exec on Linux) records its
// parent's peak at exec as its own, and the benchmark holds the rendered
// chain (about 700 MiB for 300 mainnet copies).
type hwmWatch struct {
	stop chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex
	peak int64 // bytes
}

func watchHWM(pid int, interval time.Duration) *hwmWatch {
	w := &hwmWatch{stop: make(chan struct{})}
	w.wg.Go(func() {
		every(w.stop, interval, func() {
			if m, err := procstat.ReadMemory(pid); err == nil {
				w.mu.Lock()
				w.peak = max(w.peak, m.Peak)
				w.mu.Unlock()
			}
		})
	})
	return w
}

// every calls read at once and then every interval until stop is closed.
func every(stop <-chan struct{}, interval time.Duration, read func()) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		read()
		select {
		case <-stop:
			return
		case <-ticker.C:
		}
	}
}

// finish stops the watch and returns the peak in bytes.
func (w *hwmWatch) finish() int64 {
	close(w.stop)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak
}
