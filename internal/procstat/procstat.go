// Package procstat reads what Linux's /proc says of a process: its CPU
// time (/proc/PID/stat) and its resident memory (/proc/PID/status). The
// benchmarks and the reliability tests measure the nearline processes
// with it.
package procstat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ClockTicks is Linux's USER_HZ, the unit of /proc CPU times.
const ClockTicks = 100

// Memory is a process's resident memory, in bytes.
type Memory struct {
	// Peak is VmHWM, the high-water mark of its resident set.
	Peak int64
	// Resident is VmRSS, its resident set when read.
	Resident int64
}

// ReadMemory reads the VmHWM and VmRSS of the process pid.
func ReadMemory(pid int) (Memory, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, fmt.Errorf("read memory of process %d: %w", pid, err)
	}
	m, err := parseStatus(raw)
	if err != nil {
		return Memory{}, fmt.Errorf("read memory of process %d: %w", pid, err)
	}
	return m, nil
}

// parseStatus reads VmHWM and VmRSS (in kB) off the text of
// /proc/PID/status; a status without VmHWM is an error.
func parseStatus(text []byte) (Memory, error) {
	var m Memory
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || fields[2] != "kB" {
			continue
		}
		var p *int64
		switch fields[0] {
		case "VmHWM:":
			p = &m.Peak
		case "VmRSS:":
			p = &m.Resident
		default:
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("%s %q: %w", fields[0], fields[1], err)
		}
		*p = kb << 10
	}
	if m.Peak == 0 {
		return Memory{}, errors.New("no VmHWM")
	}
	return m, nil
}

// ReadCPU returns the user and system CPU time the process pid has used,
// with its reaped children's when children.
func ReadCPU(pid int, children bool) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read CPU time of process %d: %w", pid, err)
	}
	d, err := parseStat(string(raw), children)
	if err != nil {
		return 0, fmt.Errorf("read CPU time of process %d: %w", pid, err)
	}
	return d, nil
}

// parseStat sums utime and stime (and cutime and cstime when children),
// fields 14 to 17 of /proc/PID/stat, in clock ticks.
func parseStat(text string, children bool) (time.Duration, error) {
	_, rest, ok := strings.Cut(text, ") ") // the command name may hold spaces
	if !ok {
		return 0, errors.New("no command name in /proc stat")
	}
	f := strings.Fields(rest) // f[0] is field 3 (state): utime is field 14
	if len(f) < 15 {
		return 0, fmt.Errorf("%d fields in /proc stat, want 17 or more", len(f)+2)
	}
	fields := []int{11, 12}
	if children {
		fields = append(fields, 13, 14)
	}
	var ticks int64
	for _, i := range fields {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat field %d %q: %w", i+3, f[i], err)
		}
		ticks += v
	}
	return time.Duration(ticks) * (time.Second / ClockTicks), nil
}
