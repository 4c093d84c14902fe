package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/docs"
)

// docCommand is a `nearline CMD` call in a shell block of the docs, with
// its continuation lines joined.
var docCommand = regexp.MustCompile(`(?:^|[\s;&|(])(?:\./nearline|nearline|go run \./cmd/nearline) ([a-z]+)((?: [^;&|#\n]*)?)`)

var docFlag = regexp.MustCompile(`(?:^|\s)--([a-z][a-z0-9-]*)`)

// TestDocCommandsUseRealFlags: every `nearline CMD --flag` the README and
// docs/ show in their shell blocks names a command that exists and flags
// it has (as -h prints them: no retired alias), so a copied command line
// does not fail on a renamed flag; and the README's mainnet command is the
// one its first screen promises (neardata, a recent start, the free tier's
// rate).
func TestDocCommandsUseRealFlags(t *testing.T) {
	t.Parallel()
	flagsOf := map[string][]string{}
	for _, c := range commands() {
		for _, f := range helpOf(t, c.name).flags {
			flagsOf[c.name] = append(flagsOf[c.name], f.name)
		}
		flagsOf[c.name] = append(flagsOf[c.name], "h", "help")
	}
	checked := 0
	for _, file := range docs.Files(t) {
		for _, block := range shellBlocks(docs.Read(t, file)) {
			for _, m := range docCommand.FindAllStringSubmatch(block, -1) {
				cmd, args := m[1], m[2]
				if sub := strings.Fields(args); len(sub) > 0 && flagsOf[cmd+" "+sub[0]] != nil {
					cmd = cmd + " " + sub[0] // migrate status, migrate down
				}
				flags, ok := flagsOf[cmd]
				if !ok {
					continue // prose such as "nearline help"
				}
				for _, f := range docFlag.FindAllStringSubmatch(args, -1) {
					require.True(t, slices.Contains(flags, f[1]), "%s: `nearline %s` has no flag --%s:\n%s", file, cmd, f[1], m[0])
					checked++
				}
			}
		}
	}
	require.Greater(t, checked, 20, "flags checked in the docs' shell blocks")

	readme := strings.Join(shellBlocks(docs.Read(t, "README.md")), "\n")
	for _, want := range []string{"run --sim", "--source neardata", "--from latest", "--upstream-rate 3", "--rpc-upstream"} {
		require.Contains(t, readme, want, "README's commands")
	}
}

var (
	docTableRow  = regexp.MustCompile("(?m)^\\|(.*)\\|\\s*$")
	backticked   = regexp.MustCompile("`([^`]+)`")
	docEnvOfFlag = regexp.MustCompile("^NEARLINE_[A-Z0-9_]+$")
)

// TestDocTablesPairFlagsWithTheirVariables: a table row of the README or
// docs/ that gives a flag (`--name`, first cell) and an environment
// variable (second cell) names the variable that flag reads in some
// command, and the default it shows (third cell, in code) is the one -h
// prints: a table written by hand cannot keep a variable or a default the
// code has since renamed or changed. docs/cli.md is generated and left out.
func TestDocTablesPairFlagsWithTheirVariables(t *testing.T) {
	t.Parallel()
	type flagKey struct{ name, env string }
	defaults := map[flagKey][]string{}
	for _, c := range commands() {
		for _, f := range helpOf(t, c.name).flags {
			k := flagKey{f.name, f.env}
			defaults[k] = append(defaults[k], f.def)
		}
	}
	checked := 0
	for _, file := range docs.Files(t) {
		if file == "docs/cli.md" {
			continue
		}
		for _, m := range docTableRow.FindAllStringSubmatch(docs.Read(t, file), -1) {
			cells := strings.Split(m[1], "|")
			if len(cells) < 3 {
				continue
			}
			env := backticked.FindStringSubmatch(cells[1])
			if env == nil || !docEnvOfFlag.MatchString(env[1]) {
				continue
			}
			var flags, defs []string // the row's flags, and the defaults -h prints for them with env
			for _, f := range backticked.FindAllStringSubmatch(cells[0], -1) {
				if name, ok := strings.CutPrefix(f[1], "--"); ok {
					flags = append(flags, name)
					defs = append(defs, defaults[flagKey{name, env[1]}]...)
				}
			}
			if len(flags) == 0 {
				continue
			}
			checked++
			require.NotEmpty(t, defs, "%s: no flag of %v reads %s:\n%s", file, flags, env[1], m[0])
			if shown := strings.TrimSpace(cells[2]); strings.HasPrefix(shown, "`") {
				def := backticked.FindStringSubmatch(shown)[1]
				require.Contains(t, defs, def, "%s: the default shown for %v is not the one -h prints:\n%s", file, flags, m[0])
			}
		}
	}
	require.Greater(t, checked, 8, "flag rows checked in the docs' tables")
}

// shellBlocks returns the fenced code blocks of a Markdown text, with
// backslash-continued lines joined.
func shellBlocks(text string) []string {
	var blocks []string
	parts := strings.Split(text, "```")
	for i := 1; i < len(parts); i += 2 {
		body := parts[i]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 {
			body = body[nl+1:] // the info string (sh, sql, ...)
		}
		blocks = append(blocks, strings.ReplaceAll(body, "\\\n", " "))
	}
	return blocks
}
