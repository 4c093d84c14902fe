package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
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
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			if v, err := readHWM(pid); err == nil {
				w.mu.Lock()
				w.peak = max(w.peak, v)
				w.mu.Unlock()
			}
			select {
			case <-w.stop:
				return
			case <-ticker.C:
			}
		}
	})
	return w
}

// finish stops the watch and returns the peak in bytes.
func (w *hwmWatch) finish() int64 {
	close(w.stop)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak
}

// readHWM reads VmHWM (kB) of a process, in bytes.
func readHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:")); ok {
			f := bytes.Fields(rest)
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(string(f[0]), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmHWM of %d: %w", pid, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM for process %d", pid)
}
