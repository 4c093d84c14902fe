package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strings"
	"time"
)

// Each helper registers a flag whose default comes from an environment
// variable, and says so in the flag's help. A malformed environment value
// is not ignored: the flag keeps its built-in default but carries an
// *envError, which parseFlags reports (exit status 2) unless the flag is
// given on the command line, which overrides the environment. Values are
// checked by their flag.Value (flagvalues.go): the same message, naming
// the range, serves both.

// envError is a malformed (or retired) environment value, named with its
// variable.
type envError struct {
	Var     string
	Value   string
	Problem string // what is wrong: "want an integer of 1 or more", ...
}

func (e *envError) Error() string {
	return fmt.Sprintf("%s=%q: %s", e.Var, e.Value, e.Problem)
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

func (v *envFlagValue) String() string {
	if v == nil || v.Value == nil {
		return ""
	}
	return v.Value.String()
}

// IsBoolFlag keeps `-flag` (without a value) working for bool flags.
func (v *envFlagValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (v *envFlagValue) kind() string { return kindOf(v.Value) }

// fromEnv sets the registered flag name from the environment variable, or
// marks it with an envError when the value is refused.
func fromEnv(fs *flag.FlagSet, env *environment, name, envVar string) {
	raw := env.getenv(envVar)
	if strings.TrimSpace(raw) == "" {
		return
	}
	f := fs.Lookup(name)
	if err := f.Value.Set(strings.TrimSpace(raw)); err != nil {
		f.Value = &envFlagValue{Value: f.Value, err: &envError{Var: envVar, Value: raw, Problem: err.Error()}}
		return
	}
	f.DefValue = f.Value.String()
}

// retiredEnv refuses a variable that is no longer read, naming the flag's
// variable now, unless the command line sets the flag.
func retiredEnv(fs *flag.FlagSet, env *environment, name, oldVar string) {
	raw := env.getenv(oldVar)
	if strings.TrimSpace(raw) == "" {
		return
	}
	f := fs.Lookup(name)
	if _, ok := f.Value.(*envFlagValue); ok {
		return // its own variable is refused already
	}
	f.Value = &envFlagValue{Value: f.Value, err: &envError{Var: oldVar, Value: raw,
		Problem: fmt.Sprintf("no longer read, as it meant different things to different commands; --%s reads %s", name, envVarOf(f))}}
}

// envErrors returns the refused environment values of flags that the
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

// envVarOf is the variable a flag reads, from its help.
func envVarOf(f *flag.Flag) string {
	i := strings.LastIndex(f.Usage, "(env ")
	if i < 0 {
		return ""
	}
	return strings.TrimSuffix(f.Usage[i+len("(env "):], ")")
}

// origin names where a flag's value came from, as the user typed it (URLs
// redacted: an API key or a database password is never shown): the flag on
// the command line, or its variable.
func origin(fs *flag.FlagSet, env *environment, name string) string {
	return originShown(fs, env, name, shownValue)
}

// shownValue is a flag's value as messages and -h show it: a value with a
// scheme (an upstream, a database URL) redacted by shownURLs, any other as
// it is.
func shownValue(v string) string {
	if strings.Contains(v, "://") {
		return shownURLs(v)
	}
	return v
}

// originShown is origin with the value as show gives it (shownURLs: the
// URLs redacted).
func originShown(fs *flag.FlagSet, env *environment, name string, show func(string) string) string {
	f := fs.Lookup(name)
	if !isFlagSet(fs, name) {
		if v := envVarOf(f); v != "" && env.getenv(v) != "" {
			return fmt.Sprintf("%s=%q", v, show(env.getenv(v)))
		}
	}
	return fmt.Sprintf("--%s %q", name, show(f.Value.String()))
}

// isFlagSet reports whether name was given on the command line.
func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// register adds a flag of value v, defaulting from envVar.
func register(fs *flag.FlagSet, env *environment, v flag.Value, name, envVar, help string) {
	fs.Var(v, name, usageWithEnv(help, envVar))
	fs.Lookup(name).DefValue = v.String()
	fromEnv(fs, env, name, envVar)
}

func stringFlag(fs *flag.FlagSet, env *environment, name, envVar, def, help string) *string {
	if v := env.getenv(envVar); v != "" {
		def = v
	}
	return fs.String(name, def, usageWithEnv(help, envVar))
}

// secretFlag is a string that is a secret (an API key): its value, from
// the command line or the environment, is shown nowhere (secretValue);
// -h says "(set; not shown)" when the environment sets it.
func secretFlag(fs *flag.FlagSet, env *environment, name, envVar, help string) *string {
	p := new(string)
	register(fs, env, &secretValue{p: p}, name, envVar, help)
	return p
}

// secretOrigin names where a secret flag's value came from without the
// value: the flag, or its variable.
func secretOrigin(fs *flag.FlagSet, env *environment, name string) string {
	if v := envVarOf(fs.Lookup(name)); !isFlagSet(fs, name) && v != "" && env.getenv(v) != "" {
		return v
	}
	return "--" + name
}

func intFlag(fs *flag.FlagSet, env *environment, name, envVar string, def int, r intRange, help string) *int {
	p := &def
	register(fs, env, &integerValue[int]{p: p, r: r}, name, envVar, help)
	return p
}

func uint64Flag(fs *flag.FlagSet, env *environment, name, envVar string, def uint64, r uintRange, help string) *uint64 {
	p := &def
	register(fs, env, &integerValue[uint64]{p: p, r: r}, name, envVar, help)
	return p
}

// rateFlag is a number of 0 or more.
func rateFlag(fs *flag.FlagSet, env *environment, name, envVar string, def float64, help string) *float64 {
	p := &def
	register(fs, env, &floatValue{p: p, min: 0, max: math.Inf(1)}, name, envVar, help)
	return p
}

func durationFlag(fs *flag.FlagSet, env *environment, name, envVar string, def time.Duration, r durationRange, help string) *time.Duration {
	p := &def
	register(fs, env, &durationValue{p: p, r: r}, name, envVar, help)
	return p
}

func boolFlag(fs *flag.FlagSet, env *environment, name, envVar string, def bool, help string) *bool {
	p := &def
	register(fs, env, &boolValue{p: p}, name, envVar, help)
	return p
}

// fractionFlag is a number from 0 to 1.
func fractionFlag(fs *flag.FlagSet, env *environment, name, envVar string, def float64, help string) *float64 {
	p := &def
	register(fs, env, &floatValue{p: p, min: 0, max: 1}, name, envVar, help)
	return p
}

// heightFlag is an optional block height; with isLatest set, "latest" too.
func heightFlag(fs *flag.FlagSet, env *environment, name, envVar string, isLatest *bool, help string) **uint64 {
	var h *uint64
	register(fs, env, &optUintValue{h: &h, isLatest: isLatest, noun: "a block height", word: "height"}, name, envVar, help)
	return &h
}

// optUintFlag is an optional non-negative integer.
func optUintFlag(fs *flag.FlagSet, env *environment, name, envVar, help string) **uint64 {
	var n *uint64
	register(fs, env, &optUintValue{h: &n, noun: "a non-negative integer", word: "number"}, name, envVar, help)
	return &n
}

func heightsFlag(fs *flag.FlagSet, env *environment, name, envVar, help string) *heightList {
	p := &heightList{}
	register(fs, env, p, name, envVar, help)
	return p
}

func timeFlag(fs *flag.FlagSet, env *environment, name, envVar string, def time.Time, help string) *time.Time {
	p := &def
	register(fs, env, timeValue{p}, name, envVar, help)
	return p
}

// aliasValue is a former name of a flag: it sets the flag, and is hidden
// from -h.
type aliasValue struct {
	target *flag.Flag
	used   *bool
}

func (a aliasValue) String() string {
	if a.target == nil {
		return ""
	}
	return a.target.Value.String()
}

func (a aliasValue) Set(s string) error {
	*a.used = true
	return a.target.Value.Set(s)
}

// alias registers old as a hidden former name of the flag name; parseFlags
// says the new name when old is used.
func alias(fs *flag.FlagSet, old, name string) {
	fs.Var(aliasValue{target: fs.Lookup(name), used: new(bool)}, old, "former name of --"+name)
}

// kindOf is the word -h prints after a flag's name for a value.
func kindOf(v flag.Value) string {
	if k, ok := v.(interface{ kind() string }); ok {
		return k.kind()
	}
	name, _ := flag.UnquoteUsage(&flag.Flag{Value: v}) // flag's own word: "string" for fs.String
	return name
}

// printFlags prints the flags as flag.PrintDefaults does, with each value's
// kind, and without the hidden former names.
func printFlags(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := f.Value.(aliasValue); ok {
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, "  -%s", f.Name)
		name, usage := flag.UnquoteUsage(f)
		if !strings.Contains(f.Usage, "`") {
			name = kindOf(f.Value)
		}
		if name != "" {
			b.WriteString(" " + name)
		}
		if b.Len() <= 4 {
			b.WriteString("\t")
		} else {
			b.WriteString("\n    \t")
		}
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		zero := map[string]string{"": "false", "int": "0", "uint": "0", "float": "0", "duration": "0s"}[kindOf(f.Value)]
		if _, secret := f.Value.(*secretValue); secret {
			if f.DefValue != "" {
				b.WriteString(" (set; not shown)")
			}
		} else if f.DefValue != zero && f.DefValue != "" {
			if kindOf(f.Value) == "string" { // from the environment, a URL too: shown redacted
				fmt.Fprintf(&b, " (default %q)", shownValue(f.DefValue))
			} else {
				fmt.Fprintf(&b, " (default %v)", f.DefValue)
			}
		}
		fmt.Fprintln(fs.Output(), b.String())
	})
}

// parseFlags parses args, mapping a bad command line, or a refused
// environment value of a flag the command line does not set, to errUsage
// (exit status 2). A refused value is said in one line with a pointer to
// -h; -h prints the usage.
func parseFlags(fs *flag.FlagSet, args []string) error {
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
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected arguments: %v\n", fs.Name(), fs.Args())
		fs.Usage()
		return errUsage
	}
	if errs := envErrors(fs); len(errs) > 0 {
		for _, err := range errs {
			fmt.Fprintf(fs.Output(), "%s: invalid environment value %v\n", fs.Name(), err)
		}
		return errUsage
	}
	fs.Visit(func(f *flag.Flag) {
		if a, ok := f.Value.(aliasValue); ok && *a.used {
			fmt.Fprintf(fs.Output(), "%s: --%s is now --%s\n", fs.Name(), f.Name, a.target.Name)
		}
	})
	return nil
}
