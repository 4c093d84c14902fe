package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nearline/nearline/internal/procstat"
)

// cpuSample is CPU time used so far, in seconds, by process group: the
// benchmark's own process (the indexer and store), the simulator child,
// PostgreSQL (every postgres process, with the backends that have exited),
// and the whole machine (busy and total, from /proc/stat). Zero where
// /proc cannot be read (not Linux).
type cpuSample struct {
	self, sim, postgres, busy, total float64
}

func (a cpuSample) sub(b cpuSample) cpuSample {
	return cpuSample{self: a.self - b.self, sim: a.sim - b.sim, postgres: a.postgres - b.postgres,
		busy: a.busy - b.busy, total: a.total - b.total}
}

func sampleCPU(simPID int) cpuSample {
	var s cpuSample
	s.self = procSeconds(os.Getpid(), false)
	if simPID > 0 {
		s.sim = procSeconds(simPID, false)
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		// The postmaster's children times hold the backends it reaped;
		// a live backend is counted on its own.
		s.postgres += procSeconds(pid, true)
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
		for i, v := range f[1:] {
			n, _ := strconv.ParseFloat(v, 64)
			s.total += n / procstat.ClockTicks
			if i != 3 && i != 4 { // idle, iowait
				s.busy += n / procstat.ClockTicks
			}
		}
	}
	return s
}

// procSeconds is a process's user+system time (and its reaped children's).
// Zero where it cannot be read.
func procSeconds(pid int, children bool) float64 {
	d, err := procstat.ReadCPU(pid, children)
	if err != nil {
		return 0
	}
	return d.Seconds()
}
