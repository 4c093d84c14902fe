package envflag

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Value is a flag value of type T: parse reads it from the text (spaces
// around it dropped), refusing what it cannot use with what it wants;
// format writes it back. word is the kind -h prints after the flag's
// name; "" is a bool, set by the flag alone.
type Value[T any] struct {
	p      *T
	word   string
	parse  func(string) (T, error)
	format func(T) string
}

func (v *Value[T]) String() string   { return v.format(*v.p) }
func (v *Value[T]) kind() string     { return v.word }
func (v *Value[T]) IsBoolFlag() bool { return v.word == "" }

func (v *Value[T]) Set(s string) error {
	x, err := v.parse(strings.TrimSpace(s))
	if err == nil {
		*v.p = x
	}
	return err
}

type numeric interface {
	int | int64 | uint32 | uint64 | float64
}

// Number is a number flag of p taking min or more, and at most max unless
// max is 0. Integers are read in any base strconv reads (0x10 too).
func Number[T numeric](p *T, min, max T) *Value[T] {
	word, noun := "int", "an integer"
	switch any(min).(type) {
	case float64:
		word, noun = "float", "a number"
	case uint32, uint64:
		word = "uint"
	}
	want := fmt.Sprintf("want %s of %v or more", noun, min)
	switch {
	case max != 0:
		want = fmt.Sprintf("want %s from %v to %v", noun, min, max)
	case word == "uint" && min == 0:
		want = "want a non-negative integer"
	}
	parse := func(s string) (T, error) {
		n, err := parseNumber[T](s)
		if err != nil || n < min || (max != 0 && n > max) {
			return 0, errors.New(want)
		}
		return n, nil
	}
	return &Value[T]{p: p, word: word, parse: parse, format: func(n T) string { return fmt.Sprint(n) }}
}

func parseNumber[T numeric](s string) (T, error) {
	switch any(T(0)).(type) {
	case float64:
		f, err := strconv.ParseFloat(s, 64)
		if math.IsNaN(f) {
			err = strconv.ErrSyntax
		}
		return T(f), err
	case uint32, uint64:
		u, err := strconv.ParseUint(s, 0, 64)
		if uint64(T(u)) != u {
			err = strconv.ErrRange
		}
		return T(u), err
	}
	i, err := strconv.ParseInt(s, 0, 64)
	if int64(T(i)) != i {
		err = strconv.ErrRange
	}
	return T(i), err
}

// OrMinusOne is v taking -1 too, meaning what the help says.
func OrMinusOne(v *Value[int], meaning string) *Value[int] {
	parse := v.parse
	v.parse = func(s string) (int, error) {
		if s == "-1" {
			return -1, nil
		}
		n, err := parse(s)
		if err != nil {
			err = fmt.Errorf("%w, or -1 for %s", err, meaning)
		}
		return n, err
	}
	return v
}

// What a duration flag takes besides durations above 0.
const (
	Above0     = iota // nothing else
	OrZero            // 0, which the help says the meaning of
	OrNegative        // a negative one, likewise
)

// Duration is a duration flag of p taking a duration above 0, and what
// allow says.
func Duration(p *time.Duration, allow int) *Value[time.Duration] {
	parse := func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if _, numErr := strconv.ParseFloat(s, 64); err != nil && numErr == nil {
			return 0, fmt.Errorf("a duration needs a unit: use %ss (or %sms, %sm)", s, s, s)
		}
		switch {
		case err != nil:
			return 0, errors.New("want a duration such as 500ms, 10s or 2m")
		case d < 0 && allow != OrNegative, d == 0 && allow != OrZero:
			return 0, errors.New([]string{"want a duration above 0, such as 10s", "want a duration of 0 or more",
				"want a duration above 0, or a negative one"}[allow])
		}
		return d, nil
	}
	return &Value[time.Duration]{p: p, word: "duration", parse: parse, format: time.Duration.String}
}

// Bool is a bool flag whose refusal says what it wants.
func Bool(p *bool) *Value[bool] {
	parse := func(s string) (bool, error) {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return false, errors.New("want true or false")
		}
		return b, nil
	}
	return &Value[bool]{p: p, parse: parse, format: strconv.FormatBool}
}

// secretSet is a secret's value as String gives it.
const secretSet = "(set)"

// Secret is a string that is a secret (an API key): String gives
// secretSet, or nothing, so that neither -h nor a message can show it. It
// refuses no value, for the flag package's refusal would echo it (the
// command's check refuses it by name instead).
func Secret(p *string) *Value[string] {
	parse := func(s string) (string, error) { return s, nil }
	format := func(s string) string {
		if s == "" {
			return ""
		}
		return secretSet
	}
	return &Value[string]{p: p, word: "string", parse: parse, format: format}
}

// Latest is the --from that starts an empty archive at the upstream's final
// head.
const Latest = "latest"

// Height is an optional block height, unset until given; with isLatest,
// "latest" too, which sets it.
func Height(p **uint64, isLatest *bool) *Value[*uint64] {
	return Optional(p, "height", "a block height", isLatest)
}

// Optional is an optional non-negative integer of kind word, said to be
// noun when refused.
func Optional(p **uint64, word, noun string, isLatest *bool) *Value[*uint64] {
	want := "want " + noun
	if isLatest != nil {
		want += ` or "latest"`
	}
	parse := func(s string) (*uint64, error) {
		if isLatest != nil {
			*isLatest = s == Latest
			if s == Latest {
				return nil, nil
			}
		}
		h, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, errors.New(want)
		}
		return &h, nil
	}
	format := func(h *uint64) string {
		switch {
		case isLatest != nil && *isLatest:
			return Latest
		case h == nil:
			return ""
		}
		return strconv.FormatUint(*h, 10)
	}
	return &Value[*uint64]{p: p, word: word, parse: parse, format: format}
}

// Heights is a comma-separated list of heights.
func Heights(p *[]uint64) *Value[[]uint64] {
	parse := func(s string) ([]uint64, error) {
		var out []uint64
		for _, part := range Split(s) {
			h, err := strconv.ParseUint(part, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("want comma-separated heights (%q is not a height)", part)
			}
			out = append(out, h)
		}
		return out, nil
	}
	format := func(hs []uint64) string {
		parts := make([]string, len(hs))
		for i, h := range hs {
			parts[i] = strconv.FormatUint(h, 10)
		}
		return strings.Join(parts, ",")
	}
	return &Value[[]uint64]{p: p, word: "heights", parse: parse, format: format}
}

// Time is a time such as 2025-01-01T00:00:00Z.
func Time(p *time.Time) *Value[time.Time] {
	parse := func(s string) (time.Time, error) {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return t, errors.New("want an RFC 3339 time such as 2025-01-01T00:00:00Z")
		}
		return t, nil
	}
	return &Value[time.Time]{p: p, word: "time", parse: parse, format: func(t time.Time) string { return t.UTC().Format(time.RFC3339) }}
}

// Size is a size of 1 byte or more, such as 192MiB (parseBytes).
func Size(p *int64) *Value[int64] {
	return &Value[int64]{p: p, word: "size", parse: parseBytes, format: formatBytes}
}

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
