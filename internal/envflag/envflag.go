// Package envflag parses a flag.FlagSet whose flags default from
// environment variables: a flag the command line leaves out takes the
// value of its variable, which -h shows as its default. Its values (value.go)
// add to the flag package's a range, said in the message that refuses a
// value out of it, and the word -h prints for their kind.
package envflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/nearline/nearline/internal/httpcall"
)

// ErrUsage marks a command line that could not be parsed; the FlagSet has
// already said why.
var ErrUsage = errors.New("usage error")

// Env is where flags default from: the process's variables, and the
// variable each flag of a FlagSet reads.
type Env struct {
	Getenv func(string) string
	Var    func(fs *flag.FlagSet, name string) string
}

// Example is a command line -h shows, and what it does.
type Example struct{ Args, Does string }

// NewFlagSet returns a FlagSet named name (the command, "nearline index")
// that writes to out and reports errors instead of exiting. Its -h prints
// the synopsis, the examples, then the flags.
func NewFlagSet(name, synopsis string, out io.Writer, examples ...Example) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s %s\n\n", name, synopsis)
		if len(examples) > 0 {
			fmt.Fprintln(fs.Output(), "Examples:")
			for _, e := range examples {
				fmt.Fprintf(fs.Output(), "  %s %s\n      %s\n", name, e.Args, e.Does)
			}
			fmt.Fprintln(fs.Output())
		}
		fmt.Fprintln(fs.Output(), "Flags:")
		PrintDefaults(fs)
	}
	return fs
}

// Parse parses args into fs, then runs checks in order: the first that
// fails is said in one line ("nearline CMD: ...") and is ErrUsage (exit
// status 2). The checks run before anything connects anywhere.
func (e Env) Parse(fs *flag.FlagSet, args []string, checks ...func() error) error {
	if err := e.parse(fs, args); err != nil {
		return err
	}
	for _, check := range checks {
		if err := check(); err != nil {
			fmt.Fprintf(fs.Output(), "%s: %v\n", fs.Name(), err)
			return ErrUsage
		}
	}
	return nil
}

// parse parses args into fs. A flag the command line does not set takes
// the value of its variable, which -h shows as its default (a URL
// redacted, a secret not at all). A value that does not parse, typed or
// from the environment, is said in one line naming it and is ErrUsage
// (exit status 2); so are stray arguments. -h prints the usage.
func (e Env) parse(fs *flag.FlagSet, args []string) error {
	refused := map[string]error{}
	fs.VisitAll(func(f *flag.Flag) {
		name := e.Var(fs, f.Name)
		f.Usage += " (env " + name + ")"
		raw := e.Getenv(name)
		if strings.TrimSpace(raw) == "" {
			return
		}
		if err := f.Value.Set(raw); err != nil {
			refused[f.Name] = fmt.Errorf("%s=%q: %w", name, raw, err)
			return
		}
		f.DefValue = ShownValue(f.Value.String())
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
		return ErrUsage
	case fs.NArg() > 0:
		fmt.Fprintf(fs.Output(), "%s: unexpected arguments: %v\n", fs.Name(), fs.Args())
		fs.Usage()
		return ErrUsage
	}
	fs.VisitAll(func(f *flag.Flag) {
		if refused[f.Name] != nil && !IsSet(fs, f.Name) {
			fmt.Fprintf(fs.Output(), "%s: invalid environment value %v\n", fs.Name(), refused[f.Name])
			err = ErrUsage
		}
	})
	return err
}

// PrintDefaults prints fs's flags as flag.PrintDefaults does, with the
// kind of the values of value.go, no zero default, and a secret as set or
// not.
func PrintDefaults(fs *flag.FlagSet) {
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

// IsSet reports whether name was given on the command line.
func IsSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// Origin names where a flag's value came from, as the user typed it: the
// flag, or its variable. A URL is shown redacted: no API key or database
// password appears.
func (e Env) Origin(fs *flag.FlagSet, name string) string {
	return e.OriginShown(fs, name, ShownValue)
}

// OriginShown is Origin with the value as show gives it.
func (e Env) OriginShown(fs *flag.FlagSet, name string, show func(string) string) string {
	if v := e.Var(fs, name); !IsSet(fs, name) && e.Getenv(v) != "" {
		return fmt.Sprintf("%s=%q", v, show(e.Getenv(v)))
	}
	return fmt.Sprintf("--%s %q", name, show(fs.Lookup(name).Value.String()))
}

// SecretOrigin names where a secret flag's value came from without the
// value.
func (e Env) SecretOrigin(fs *flag.FlagSet, name string) string {
	if v := e.Var(fs, name); !IsSet(fs, name) && e.Getenv(v) != "" {
		return v
	}
	return "--" + name
}

// ShownValue is a value as messages and -h show it: one with a scheme (an
// upstream, a database URL) redacted by ShownURLs.
func ShownValue(v string) string {
	if strings.Contains(v, "://") {
		return ShownURLs(v)
	}
	return v
}

// ShownURLs is a comma-separated list of URLs, each redacted.
func ShownURLs(list string) string {
	urls := Split(list)
	for i, u := range urls {
		urls[i] = httpcall.RedactURL(u)
	}
	return strings.Join(urls, ",")
}

// Split is the items of a comma-separated list, spaces around them and
// blank ones dropped.
func Split(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
