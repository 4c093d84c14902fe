package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// byteUnits are the size suffixes parseBytes accepts, longest first.
var byteUnits = []struct {
	suffix string
	scale  int64
}{
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3},
	{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1},
}

// parseBytes reads a size: a number of bytes with an optional unit (192MiB,
// 1GiB, 500MB, 268435456).
func parseBytes(v string) (int64, error) {
	s := strings.TrimSpace(v)
	scale := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, scale = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.scale
			break
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 || n*float64(scale) > 1<<62 {
		return 0, errors.New("want a size such as 192MiB or 1GiB")
	}
	return int64(n * float64(scale)), nil
}

// formatBytes writes a size as parseBytes reads it, in the largest binary
// unit that divides it.
func formatBytes(n int64) string {
	for _, u := range byteUnits[:3] {
		if n%u.scale == 0 {
			return fmt.Sprintf("%d%s", n/u.scale, u.suffix)
		}
	}
	return strconv.FormatInt(n, 10)
}

// bytesValue is a size of 1 byte or more (parseBytes).
type bytesValue struct{ p *int64 }

func (v *bytesValue) kind() string { return "size" }

func (v *bytesValue) String() string {
	if v == nil || v.p == nil {
		return "0"
	}
	return formatBytes(*v.p)
}

func (v *bytesValue) Set(s string) error {
	n, err := parseBytes(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}

// bytesFlag is a size such as 192MiB.
func bytesFlag(fs *flag.FlagSet, env *environment, name, envVar string, def int64, help string) *int64 {
	p := &def
	register(fs, env, &bytesValue{p: p}, name, envVar, help)
	return p
}
