package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/nearline/nearline/internal/httpcall"
)

// Every command parses a flag.FlagSet of its own whose flags fill the
// packages' Configs. parse gives each flag the command line leaves out the
// value of its environment variable (envVar). The values below add to the
// flag package's a range, said in the message that refuses a value out of
// it, and the word -h prints for their kind.

// envNames are the variables of the flags that do not read NEARLINE_ and
// their name in capitals, by command and flag.
var envNames = map[string]string{
	"migrate down to":       "NEARLINE_MIGRATE_DOWN_TO",
	"run sim":               "NEARLINE_RUN_SIM",
	"serve request-timeout": "NEARLINE_RPC_REQUEST_TIMEOUT",
	"sim listen":            "NEARLINE_SIM_LISTEN",
	"verify from":           "NEARLINE_VERIFY_FROM",
	"verify to":             "NEARLINE_VERIFY_TO",
	"verify sample":         "NEARLINE_VERIFY_SAMPLE",
	"verify seed":           "NEARLINE_VERIFY_SEED",
	"verify accounts":       "NEARLINE_VERIFY_ACCOUNTS",
	"verify concurrency":    "NEARLINE_VERIFY_CONCURRENCY",
	"verify timeout":        "NEARLINE_VERIFY_TIMEOUT",
	"verify show":           "NEARLINE_VERIFY_SHOW",
}

// envVar is the variable the flag name of fs reads.
func envVar(fs *flag.FlagSet, name string) string {
	if v, ok := envNames[strings.TrimPrefix(fs.Name(), "nearline ")+" "+name]; ok {
		return v
	}
	return "NEARLINE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// parse parses args into fs. A flag the command line does not set takes
// the value of its variable, which -h shows as its default (a URL
// redacted, a secret not at all). A value that does not parse, typed or
// from the environment, is said in one line naming it and is errUsage
// (exit status 2); so are stray arguments. -h prints the usage.
func parse(fs *flag.FlagSet, env *environment, args []string) error {
	refused := map[string]error{}
	fs.VisitAll(func(f *flag.Flag) {
		name := envVar(fs, f.Name)
		f.Usage += " (env " + name + ")"
		raw := env.getenv(name)
		if strings.TrimSpace(raw) == "" {
			return
		}
		if err := f.Value.Set(raw); err != nil {
			refused[f.Name] = fmt.Errorf("%s=%q: %w", name, raw, err)
			return
		}
		f.DefValue = shownValue(f.Value.String())
	})
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = func() { fmt.Fprintf(fs.Output(), "Run '%s -h' for its flags.\n", fs.Name()) }
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage()
		return err
	case err != nil:
		fs.Usage()
		return errUsage
	case fs.NArg() > 0:
		fmt.Fprintf(fs.Output(), "%s: unexpected arguments: %v\n", fs.Name(), fs.Args())
		fs.Usage()
		return errUsage
	}
	fs.VisitAll(func(f *flag.Flag) {
		if refused[f.Name] != nil && !isFlagSet(fs, f.Name) {
			fmt.Fprintf(fs.Output(), "%s: invalid environment value %v\n", fs.Name(), refused[f.Name])
			err = errUsage
		}
	})
	return err
}

// printFlags prints fs's flags as flag.PrintDefaults does, with the kind
// of the values below, no zero default, and a secret as set or not.
func printFlags(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		if v, ok := f.Value.(interface{ kind() string }); ok && !strings.Contains(f.Usage, "`") {
			kind = v.kind()
		}
		def := ""
		switch {
		case f.DefValue == secretSet:
			def = " (set; not shown)"
		case f.DefValue == map[string]string{"": "false", "int": "0", "uint": "0", "float": "0", "duration": "0s"}[kind]:
		case kind == "string":
			def = fmt.Sprintf(" (default %q)", f.DefValue)
		default:
			def = " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(fs.Output(), "  -%s\n    \t%s%s\n", strings.TrimSpace(f.Name+" "+kind), usage, def)
	})
}

// isFlagSet reports whether name was given on the command line.
func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// origin names where a flag's value came from, as the user typed it: the
// flag, or its variable. A URL is shown redacted: no API key or database
// password appears.
func origin(fs *flag.FlagSet, env *environment, name string) string {
	return originShown(fs, env, name, shownValue)
}

// originShown is origin with the value as show gives it.
func originShown(fs *flag.FlagSet, env *environment, name string, show func(string) string) string {
	if v := envVar(fs, name); !isFlagSet(fs, name) && env.getenv(v) != "" {
		return fmt.Sprintf("%s=%q", v, show(env.getenv(v)))
	}
	return fmt.Sprintf("--%s %q", name, show(fs.Lookup(name).Value.String()))
}

// secretOrigin names where a secret flag's value came from without the
// value.
func secretOrigin(fs *flag.FlagSet, env *environment, name string) string {
	if v := envVar(fs, name); !isFlagSet(fs, name) && env.getenv(v) != "" {
		return v
	}
	return "--" + name
}

// shownValue is a value as messages and -h show it: one with a scheme (an
// upstream, a database URL) redacted by shownURLs.
func shownValue(v string) string {
	if strings.Contains(v, "://") {
		return shownURLs(v)
	}
	return v
}

// shownURLs is a comma-separated list of URLs, each redacted.
func shownURLs(list string) string {
	urls := splitList(list)
	for i, u := range urls {
		urls[i] = httpcall.RedactURL(u)
	}
	return strings.Join(urls, ",")
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// value is a flag value of type T: parse reads it from the text (spaces
// around it dropped), refusing what it cannot use with what it wants;
// format writes it back. word is the kind -h prints after the flag's
// name; "" is a bool, set by the flag alone.
type value[T any] struct {
	p      *T
	word   string
	parse  func(string) (T, error)
	format func(T) string
}

func (v *value[T]) String() string   { return v.format(*v.p) }
func (v *value[T]) kind() string     { return v.word }
func (v *value[T]) IsBoolFlag() bool { return v.word == "" }

func (v *value[T]) Set(s string) error {
	x, err := v.parse(strings.TrimSpace(s))
	if err == nil {
		*v.p = x
	}
	return err
}

type numeric interface {
	int | int64 | uint32 | uint64 | float64
}

// number is a number flag of p taking min or more, and at most max unless
// max is 0. Integers are read in any base strconv reads (0x10 too).
func number[T numeric](p *T, min, max T) *value[T] {
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
	return &value[T]{p: p, word: word, parse: parse, format: func(n T) string { return fmt.Sprint(n) }}
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

// orMinusOne is v taking -1 too, meaning what the help says.
func orMinusOne(v *value[int], meaning string) *value[int] {
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
	above0     = iota // nothing else
	orZero            // 0, which the help says the meaning of
	orNegative        // a negative one, likewise
)

// duration is a duration flag of p taking a duration above 0, and what
// allow says.
func duration(p *time.Duration, allow int) *value[time.Duration] {
	parse := func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if _, numErr := strconv.ParseFloat(s, 64); err != nil && numErr == nil {
			return 0, fmt.Errorf("a duration needs a unit: use %ss (or %sms, %sm)", s, s, s)
		}
		switch {
		case err != nil:
			return 0, errors.New("want a duration such as 500ms, 10s or 2m")
		case d < 0 && allow != orNegative, d == 0 && allow != orZero:
			return 0, errors.New([]string{"want a duration above 0, such as 10s", "want a duration of 0 or more",
				"want a duration above 0, or a negative one"}[allow])
		}
		return d, nil
	}
	return &value[time.Duration]{p: p, word: "duration", parse: parse, format: time.Duration.String}
}

func boolean(p *bool) *value[bool] {
	parse := func(s string) (bool, error) {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return false, errors.New("want true or false")
		}
		return b, nil
	}
	return &value[bool]{p: p, parse: parse, format: strconv.FormatBool}
}

// secretSet is a secret's value as String gives it.
const secretSet = "(set)"

// secret is a string that is a secret (an API key): String gives
// secretSet, or nothing, so that neither -h nor a message can show it. It
// refuses no value, for the flag package's refusal would echo it (the
// command's check refuses it by name instead).
func secret(p *string) *value[string] {
	parse := func(s string) (string, error) { return s, nil }
	format := func(s string) string {
		if s == "" {
			return ""
		}
		return secretSet
	}
	return &value[string]{p: p, word: "string", parse: parse, format: format}
}

// latest is the --from that starts an empty archive at the upstream's final
// head.
const latest = "latest"

// height is an optional block height, unset until given; with isLatest,
// "latest" too, which sets it.
func height(p **uint64, isLatest *bool) *value[*uint64] {
	return optional(p, "height", "a block height", isLatest)
}

// optional is an optional non-negative integer of kind word, said to be
// noun when refused.
func optional(p **uint64, word, noun string, isLatest *bool) *value[*uint64] {
	want := "want " + noun
	if isLatest != nil {
		want += ` or "latest"`
	}
	parse := func(s string) (*uint64, error) {
		if isLatest != nil {
			*isLatest = s == latest
			if s == latest {
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
			return latest
		case h == nil:
			return ""
		}
		return strconv.FormatUint(*h, 10)
	}
	return &value[*uint64]{p: p, word: word, parse: parse, format: format}
}

// heights is a comma-separated list of heights.
func heights(p *[]uint64) *value[[]uint64] {
	parse := func(s string) ([]uint64, error) {
		var out []uint64
		for _, part := range splitList(s) {
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
	return &value[[]uint64]{p: p, word: "heights", parse: parse, format: format}
}

// rfc3339 is a time such as 2025-01-01T00:00:00Z.
func rfc3339(p *time.Time) *value[time.Time] {
	parse := func(s string) (time.Time, error) {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return t, errors.New("want an RFC 3339 time such as 2025-01-01T00:00:00Z")
		}
		return t, nil
	}
	return &value[time.Time]{p: p, word: "time", parse: parse, format: func(t time.Time) string { return t.UTC().Format(time.RFC3339) }}
}

// size is a size of 1 byte or more, such as 192MiB (parseBytes).
func size(p *int64) *value[int64] {
	return &value[int64]{p: p, word: "size", parse: parseBytes, format: formatBytes}
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
