package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/docs"
)

// docCommand is a `nearline CMD` call in a shell block of the docs, with
// its continuation lines joined.
var docCommand = regexp.MustCompile(`(?:^|[\s;&|(])(?:\./nearline|nearline|go run \./cmd/nearline) ([a-z]+)((?: [^;&|#]*)?)`)

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
	files := []string{"README.md"}
	entries, err := os.ReadDir(filepath.Join(docs.Root(), "docs"))
	require.NoError(t, err)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") {
			files = append(files, "docs/"+e.Name())
		}
	}
	checked := 0
	for _, file := range files {
		for _, block := range shellBlocks(docs.Read(t, file)) {
			for _, m := range docCommand.FindAllStringSubmatch(block, -1) {
				cmd, args := m[1], m[2]
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
