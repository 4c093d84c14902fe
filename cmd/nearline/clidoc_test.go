package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/docs"
)

var update = flag.Bool("update", false, "rewrite the generated parts of docs/cli.md from the commands' flags")

// cliDoc is the file whose flag tables TestCLIDoc generates.
const cliDoc = "docs/cli.md"

// inherits names, for a command that registers the flags of others, the
// commands whose tables it does not repeat.
var inherits = map[string][]string{"run": {"index", "serve"}}

// flagDoc is one flag as `nearline CMD -h` prints it.
type flagDoc struct {
	name, kind, usage, env, def string
}

// commandDoc is a command's synopsis and flags, in -h order (by name).
type commandDoc struct {
	name, synopsis string
	flags          []flagDoc
}

var (
	helpFlag    = regexp.MustCompile(`^  -(\S+)(?: (\S+))?$`)
	helpDefault = regexp.MustCompile(`^(.*\(env NEARLINE_\w+\)) \(default (.*)\)$`)
	helpEnv     = regexp.MustCompile(`^(.*) \(env (NEARLINE_\w+)\)$`)
)

// helpOf runs `nearline name -h` in an empty environment (so every default
// is the built-in one) and parses what it prints.
func helpOf(t *testing.T, name string) commandDoc {
	t.Helper()
	env, stdout, stderr := testEnv(nil)
	require.Equal(t, 0, run(context.Background(), env, append(strings.Fields(name), "-h")), "nearline %s -h", name)
	lines := strings.Split(stdout.String()+stderr.String(), "\n")
	prefix := "Usage: nearline " + name + " "
	require.True(t, strings.HasPrefix(lines[0], prefix), "first line of nearline %s -h: %q", name, lines[0])
	c := commandDoc{name: name, synopsis: strings.TrimPrefix(lines[0], prefix)}
	for _, line := range lines[1:] {
		if m := helpFlag.FindStringSubmatch(line); m != nil {
			c.flags = append(c.flags, flagDoc{name: m[1], kind: m[2]})
			continue
		}
		if !strings.HasPrefix(line, "    \t") || len(c.flags) == 0 {
			continue
		}
		f := &c.flags[len(c.flags)-1]
		f.usage = strings.TrimSpace(f.usage + " " + strings.TrimPrefix(line, "    \t"))
	}
	for i := range c.flags {
		f := &c.flags[i]
		if m := helpDefault.FindStringSubmatch(f.usage); m != nil {
			f.usage, f.def = m[1], m[2]
			if f.kind == "string" {
				def, err := strconv.Unquote(f.def)
				require.NoError(t, err, "default of -%s", f.name)
				f.def = def
			}
		}
		m := helpEnv.FindStringSubmatch(f.usage)
		require.NotNil(t, m, "nearline %s -%s names no environment variable: %q", name, f.name, f.usage)
		f.usage, f.env = m[1], m[2]
		if f.def == "" {
			f.def = map[string]string{"": "false", "int": "0", "uint": "0", "float": "0", "duration": "0s"}[f.kind]
		}
	}
	return c
}

var (
	flagMention = regexp.MustCompile(`--[a-z][a-z0-9-]*(?:=[a-z0-9]+)?`)
	markdownEsc = strings.NewReplacer("<", "&lt;", ">", "&gt;", "*", `\*`, "|", `\|`)
)

// meaning writes a flag's help as Markdown: flags it names in code.
func meaning(usage string) string {
	return flagMention.ReplaceAllStringFunc(markdownEsc.Replace(usage), func(s string) string { return "`" + s + "`" })
}

func code(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "`--" + n + "`"
	}
	if len(quoted) < 2 {
		return strings.Join(quoted, "")
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " and " + quoted[len(quoted)-1]
}

// block is the generated Markdown of one command: its synopsis, what it
// takes from the commands it inherits from, and the table of its own flags.
func block(c commandDoc, all map[string]commandDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`nearline %s %s`\n\n", c.name, c.synopsis)
	own := c.flags
	if bases := inherits[c.name]; len(bases) > 0 {
		inherited := map[string]bool{}
		var parts []string
		for _, base := range bases {
			var replaced, absent []string // names run gives another meaning; names run lacks
			owner := ""
			for _, f := range all[base].flags {
				i := slices.IndexFunc(c.flags, func(g flagDoc) bool { return g.name == f.name })
				switch {
				case i >= 0 && c.flags[i] == f:
					inherited[f.name] = true
				case i >= 0:
					replaced = append(replaced, f.name)
					for _, other := range bases {
						if slices.Contains(all[other].flags, c.flags[i]) {
							owner = other
						}
					}
				default:
					absent = append(absent, f.name)
				}
			}
			part := fmt.Sprintf("every flag of [`nearline %s`](#nearline-%s)", base, base)
			if len(replaced)+len(absent) > 0 {
				part = fmt.Sprintf("the flags of [`nearline %s`](#nearline-%s) but %s", base, base, code(append(replaced, absent...)))
			}
			switch {
			case len(replaced) > 0 && owner != "" && len(absent) == 0:
				part += fmt.Sprintf(", which in `%s` are `nearline %s`'s", c.name, owner)
			case len(replaced) > 0 && owner != "":
				part += fmt.Sprintf(" (%s: in `%s`, `nearline %s`'s)", code(replaced), c.name, owner)
			}
			parts = append(parts, part)
		}
		own = slices.DeleteFunc(slices.Clone(c.flags), func(f flagDoc) bool { return inherited[f.name] })
		fmt.Fprintf(&b, "It takes %s, and these of its own:\n\n", strings.Join(parts, "; "))
	}
	if len(own) == 0 {
		b.WriteString("It takes no flags.\n")
		return b.String()
	}
	b.WriteString("| flag | variable | default | meaning |\n|---|---|---|---|\n")
	for _, f := range own {
		name := "--" + f.name
		if f.kind != "" {
			name += " " + f.kind
		}
		def := ""
		if f.def != "" {
			def = "`" + f.def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", name, f.env, def, meaning(f.usage))
	}
	return b.String()
}

// generated returns text with the block of every command rewritten; the
// blocks sit between `<!-- cli:begin NAME -->` and `<!-- cli:end NAME -->`.
func generated(t *testing.T, text string) string {
	t.Helper()
	all := map[string]commandDoc{}
	var names []string
	for _, c := range commands() {
		all[c.name] = helpOf(t, c.name)
		names = append(names, c.name)
	}
	for _, name := range names {
		begin, end := "<!-- cli:begin "+name+" -->\n", "<!-- cli:end "+name+" -->"
		i, j := strings.Index(text, begin), strings.Index(text, end)
		require.True(t, i >= 0 && j > i, "%s has no %q ... %q block for nearline %s", cliDoc, strings.TrimSpace(begin), end, name)
		text = text[:i+len(begin)] + block(all[name], all) + text[j:]
	}
	for _, m := range regexp.MustCompile(`<!-- cli:begin (\S+) -->`).FindAllStringSubmatch(text, -1) {
		require.Contains(t, names, m[1], "%s has a block for %q, which is no command", cliDoc, m[1])
	}
	return text
}

// TestCLIDoc: docs/cli.md's flag tables are what the commands' FlagSets
// print with -h, so the documentation cannot drift from the flags. After
// changing a flag, `go test ./cmd/nearline -run TestCLIDoc -update`
// rewrites them.
func TestCLIDoc(t *testing.T) {
	path := filepath.Join(docs.Root(), filepath.FromSlash(cliDoc))
	current := docs.Read(t, cliDoc)
	want := generated(t, current)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, current, "%s is not what the flags print: run go test ./cmd/nearline -run TestCLIDoc -update", cliDoc)
}

// TestHelpParsing checks the parser on flags of every kind the helpers
// register, so a change of PrintDefaults' format fails here first.
func TestHelpParsing(t *testing.T) {
	t.Parallel()
	sim := helpOf(t, "sim")
	byName := map[string]flagDoc{}
	for _, f := range sim.flags {
		byName[f.name] = f
	}
	require.Equal(t, flagDoc{name: "listen", kind: "string", usage: "address to serve JSON-RPC on", env: "NEARLINE_SIM_LISTEN", def: "127.0.0.1:3030"}, byName["listen"])
	require.Equal(t, flagDoc{name: "archival", usage: byName["archival"].usage, env: "NEARLINE_ARCHIVAL", def: "true"}, byName["archival"])
	require.Equal(t, "0", byName["seed"].def)
	require.Equal(t, "uint", byName["seed"].kind)
	require.Equal(t, "0s", byName["latency"].def)
	require.Equal(t, "false", byName["nearcore-next"].def)
	require.Equal(t, "`--archival=false` without `--gc-window` keeps 5 epochs", meaning("--archival=false without --gc-window keeps 5 epochs"))
	require.Equal(t, "requests must use /&lt;api-key&gt;/... (\\* for any)", meaning("requests must use /<api-key>/... (* for any)"))
}

// TestRunAndIndexHelpOpenWithExamples: run -h and index -h open with their
// usage line (run's names --sim) and two or three examples, each of which
// parses: its flags are the command's and their values valid, so that the
// example with -h after it prints the help.
func TestRunAndIndexHelpOpenWithExamples(t *testing.T) {
	t.Parallel()
	require.Contains(t, helpOf(t, "run").synopsis, "--sim")
	for _, cmd := range []string{"run", "index"} {
		env, _, stderr := testEnv(nil)
		require.Equal(t, 0, run(context.Background(), env, []string{cmd, "-h"}))
		lines := strings.Split(stderr.String(), "\n")
		require.Equal(t, "Examples:", lines[2], "nearline %s -h", cmd)
		var examples []string
		for _, line := range lines[3:] {
			if e, ok := strings.CutPrefix(line, "  nearline "); ok {
				examples = append(examples, e)
			} else if !strings.HasPrefix(line, "      ") {
				break
			}
		}
		require.True(t, len(examples) >= 2 && len(examples) <= 3, "examples of nearline %s: %q", cmd, examples)
		for _, e := range examples {
			require.True(t, strings.HasPrefix(e, cmd+" "), e)
			env, _, stderr := testEnv(nil)
			require.Equal(t, 0, run(context.Background(), env, append(strings.Fields(e), "-h")), "nearline %s: %s", e, stderr)
		}
	}
}
