package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The flag values the helpers of envflag.go register. Each parses one
// kind of value and refuses one out of its range, saying what it wants; the
// same message serves a command-line value and an environment one. kind is
// the word -h prints after the flag's name.

// intRange is what an int flag accepts: min or more (and at most max, when
// max is above 0), and -1 too when minusOne names its meaning.
type intRange struct {
	min, max int
	minusOne string
}

// Ranges of the int flags.
var (
	positive   = intRange{min: 1}
	noneOrMore = intRange{min: 0}
)

// orMinusOne is r with -1 meaning what the help says (no bound, no limit).
func (r intRange) orMinusOne(meaning string) intRange { r.minusOne = meaning; return r }

func (r intRange) want() string {
	var w string
	if r.max > 0 {
		w = fmt.Sprintf("an integer from %d to %d", r.min, r.max)
	} else {
		w = fmt.Sprintf("an integer of %d or more", r.min)
	}
	if r.minusOne != "" {
		w += ", or -1 for " + r.minusOne
	}
	return "want " + w
}

func (r intRange) allows(n int) bool {
	return (n >= r.min && (r.max <= 0 || n <= r.max)) || (n == -1 && r.minusOne != "")
}

// uintRange is what a uint flag accepts: min to max.
type uintRange struct{ min, max uint64 }

// anyUint is every non-negative integer.
var anyUint = uintRange{0, math.MaxUint64}

func (r uintRange) want() string {
	switch {
	case r.max == math.MaxUint64 && r.min == 0:
		return "want a non-negative integer"
	case r.max == math.MaxUint64:
		return fmt.Sprintf("want an integer of %d or more", r.min)
	}
	return fmt.Sprintf("want an integer from %d to %d", r.min, r.max)
}

func (r uintRange) allows(n uint64) bool { return n >= r.min && n <= r.max }

// integerValue is an int or a uint64 flag, in any base strconv reads
// with base 0 (0x10 too), refused out of its range r.
type integerValue[T int | uint64] struct {
	p *T
	r interface {
		allows(T) bool
		want() string
	}
}

// kind is "int" or "uint".
func (v *integerValue[T]) kind() string {
	if _, ok := any(*new(T)).(int); ok {
		return "int"
	}
	return "uint"
}

func (v *integerValue[T]) String() string {
	if v == nil || v.p == nil {
		return "0"
	}
	return fmt.Sprint(*v.p)
}

func (v *integerValue[T]) Set(s string) error {
	n, err := parseInteger[T](strings.TrimSpace(s))
	if err != nil || !v.r.allows(n) {
		return fmt.Errorf("%s", v.r.want())
	}
	*v.p = n
	return nil
}

// parseInteger parses s as an int or a uint64, with base 0.
func parseInteger[T int | uint64](s string) (T, error) {
	if _, ok := any(*new(T)).(int); ok {
		n, err := strconv.ParseInt(s, 0, strconv.IntSize)
		return T(n), err
	}
	n, err := strconv.ParseUint(s, 0, 64)
	return T(n), err
}

// floatValue is a number from min to max.
type floatValue struct {
	p        *float64
	min, max float64
}

func (v *floatValue) kind() string { return "float" }

func (v *floatValue) String() string {
	if v == nil || v.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

func (v *floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || f < v.min || f > v.max {
		if math.IsInf(v.max, 1) {
			return fmt.Errorf("want a number of %g or more", v.min)
		}
		return fmt.Errorf("want a number from %g to %g", v.min, v.max)
	}
	*v.p = f
	return nil
}

// durationRange is what a duration flag accepts.
type durationRange int

const (
	positiveDuration durationRange = iota // above 0
	zeroOrMore                            // 0 (the help says what it means) or more
	nonZero                               // above 0, or negative (the help says what that means)
)

type durationValue struct {
	p *time.Duration
	r durationRange
}

func (v *durationValue) kind() string { return "duration" }

func (v *durationValue) String() string {
	if v == nil || v.p == nil {
		return "0s"
	}
	return v.p.String()
}

func (v *durationValue) Set(s string) error {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, numErr := strconv.ParseFloat(s, 64); numErr == nil {
			return fmt.Errorf("a duration needs a unit: use %ss (or %sms, %sm)", s, s, s)
		}
		return fmt.Errorf("want a duration such as 500ms, 10s or 2m")
	}
	switch {
	case v.r == positiveDuration && d <= 0:
		return fmt.Errorf("want a duration above 0, such as 10s")
	case v.r == zeroOrMore && d < 0:
		return fmt.Errorf("want a duration of 0 or more")
	case v.r == nonZero && d == 0:
		return fmt.Errorf("want a duration above 0, or a negative one")
	}
	*v.p = d
	return nil
}

type boolValue struct{ p *bool }

func (v *boolValue) kind() string     { return "" }
func (v *boolValue) IsBoolFlag() bool { return true }

func (v *boolValue) String() string {
	if v == nil || v.p == nil {
		return "false"
	}
	return strconv.FormatBool(*v.p)
}

func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	*v.p = b
	return nil
}

// latest is the --from that starts an empty archive at the upstream's final
// head.
const latest = "latest"

// optUintValue is an optional non-negative integer (a block height, a
// seed): unset until given; with isLatest, "latest" too.
type optUintValue struct {
	h        **uint64
	isLatest *bool  // nil: "latest" is refused
	noun     string // what it is, for the message: "a block height"
	word     string // its kind in -h: "height"
}

func (v *optUintValue) kind() string { return v.word }

func (v *optUintValue) String() string {
	switch {
	case v == nil || v.h == nil:
		return ""
	case v.isLatest != nil && *v.isLatest:
		return latest
	case *v.h == nil:
		return ""
	}
	return strconv.FormatUint(**v.h, 10)
}

func (v *optUintValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if v.isLatest != nil {
		*v.isLatest = s == latest
		if s == latest {
			*v.h = nil
			return nil
		}
	}
	if s == "" {
		*v.h = nil
		return nil
	}
	h, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		if v.isLatest != nil {
			return fmt.Errorf("want %s or %q", v.noun, latest)
		}
		return fmt.Errorf("want %s", v.noun)
	}
	*v.h = &h
	return nil
}

// heightList is a flag value of comma-separated heights.
type heightList []uint64

func (l *heightList) String() string {
	if l == nil {
		return ""
	}
	parts := make([]string, len(*l))
	for i, h := range *l {
		parts[i] = strconv.FormatUint(h, 10)
	}
	return strings.Join(parts, ",")
}

func (l *heightList) Set(s string) error {
	var out heightList
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		h, err := strconv.ParseUint(part, 10, 64)
		if err != nil {
			return fmt.Errorf("want comma-separated heights (%q is not a height)", part)
		}
		out = append(out, h)
	}
	*l = out
	return nil
}

// timeValue is a flag value of an RFC 3339 time.
type timeValue struct{ t *time.Time }

func (v timeValue) String() string {
	if v.t == nil {
		return ""
	}
	return v.t.UTC().Format(time.RFC3339)
}

func (v timeValue) Set(s string) error {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("want an RFC 3339 time such as 2025-01-01T00:00:00Z")
	}
	*v.t = t
	return nil
}

// secretValue is a flag holding a secret (an API key). It refuses no value,
// for the flag package's refusal would echo it (the command's check
// refuses it by name instead, checkKeys), and String never gives it:
// "(set)" or nothing, so that -h and every message that shows a flag's
// value cannot show the secret. Spaces around it are dropped.
type secretValue struct{ p *string }

func (v *secretValue) kind() string { return "string" }

func (v *secretValue) String() string {
	if v == nil || v.p == nil || *v.p == "" {
		return ""
	}
	return "(set)"
}

func (v *secretValue) Set(s string) error {
	*v.p = strings.TrimSpace(s)
	return nil
}
