package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Each helper registers a flag whose default comes from an environment
// variable, and says so in the flag's help. A malformed environment value
// is not ignored: the flag keeps its built-in default but carries an
// *envError, which parseFlags reports (exit status 2) unless the flag is
// given on the command line, which overrides the environment.

// envError is a malformed environment value, named with its variable.
type envError struct {
	Var   string
	Value string
	Want  string
}

func (e *envError) Error() string {
	return fmt.Sprintf("%s=%q: want %s", e.Var, e.Value, e.Want)
}

// envFlagValue stands in for a flag whose environment value was malformed.
type envFlagValue struct {
	flag.Value
	err *envError // cleared when the command line sets the flag
}

func (v *envFlagValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		return err
	}
	v.err = nil
	return nil
}

// IsBoolFlag keeps `-flag` (without a value) working for bool flags.
func (v *envFlagValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// fromEnv sets the registered flag name from the environment variable, or
// marks it with an envError when the value does not parse as want.
func fromEnv(fs *flag.FlagSet, env *environment, name, envVar, want string) {
	raw := env.getenv(envVar)
	if strings.TrimSpace(raw) == "" {
		return
	}
	f := fs.Lookup(name)
	if err := f.Value.Set(strings.TrimSpace(raw)); err != nil {
		f.Value = &envFlagValue{Value: f.Value, err: &envError{Var: envVar, Value: raw, Want: want}}
		return
	}
	f.DefValue = f.Value.String()
}

// envErrors returns the malformed environment values of flags that the
// command line did not override.
func envErrors(fs *flag.FlagSet) []error {
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := f.Value.(*envFlagValue); ok && v.err != nil {
			errs = append(errs, v.err)
		}
	})
	return errs
}

func usageWithEnv(help, envVar string) string { return fmt.Sprintf("%s (env %s)", help, envVar) }

func stringFlag(fs *flag.FlagSet, env *environment, name, envVar, def, help string) *string {
	if v := env.getenv(envVar); v != "" {
		def = v
	}
	return fs.String(name, def, usageWithEnv(help, envVar))
}

func intFlag(fs *flag.FlagSet, env *environment, name, envVar string, def int, help string) *int {
	p := fs.Int(name, def, usageWithEnv(help, envVar))
	fromEnv(fs, env, name, envVar, "an integer")
	return p
}

func uint64Flag(fs *flag.FlagSet, env *environment, name, envVar string, def uint64, help string) *uint64 {
	p := fs.Uint64(name, def, usageWithEnv(help, envVar))
	fromEnv(fs, env, name, envVar, "a non-negative integer")
	return p
}

func durationFlag(fs *flag.FlagSet, env *environment, name, envVar string, def time.Duration, help string) *time.Duration {
	p := fs.Duration(name, def, usageWithEnv(help, envVar))
	fromEnv(fs, env, name, envVar, "a duration such as 500ms or 10s")
	return p
}

func boolFlag(fs *flag.FlagSet, env *environment, name, envVar string, def bool, help string) *bool {
	p := fs.Bool(name, def, usageWithEnv(help, envVar))
	fromEnv(fs, env, name, envVar, "true or false")
	return p
}

func float64Flag(fs *flag.FlagSet, env *environment, name, envVar string, def float64, help string) *float64 {
	p := fs.Float64(name, def, usageWithEnv(help, envVar))
	fromEnv(fs, env, name, envVar, "a number")
	return p
}

// heightList is a flag value of comma-separated heights.
type heightList []uint64

func (l *heightList) String() string {
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
			return fmt.Errorf("height %q: want a non-negative integer", part)
		}
		out = append(out, h)
	}
	*l = out
	return nil
}

func heightsFlag(fs *flag.FlagSet, env *environment, name, envVar, help string) *heightList {
	p := &heightList{}
	fs.Var(p, name, usageWithEnv(help, envVar))
	fromEnv(fs, env, name, envVar, "comma-separated heights")
	return p
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
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("time %q: want RFC 3339, such as 2025-01-01T00:00:00Z", s)
	}
	*v.t = t
	return nil
}

func timeFlag(fs *flag.FlagSet, env *environment, name, envVar string, def time.Time, help string) *time.Time {
	p := &def
	fs.Var(timeValue{p}, name, usageWithEnv(help, envVar))
	fromEnv(fs, env, name, envVar, "an RFC 3339 time such as 2025-01-01T00:00:00Z")
	return p
}
