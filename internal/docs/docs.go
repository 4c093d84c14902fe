// Package docs reads the repository's Markdown documentation (README.md,
// docs/*.md) for tests, so that what a reader is shown is what the tests
// run: the SQL blocks of a section, the rows of a table, the sections
// themselves. It is the one reader of the docs; tests never open a
// Markdown file by a relative path of their own.
//
// A section is a heading line (as written, "## Example queries") and
// everything after it up to the next heading of the same or a higher
// level. Lines inside fenced code blocks are never headings.
package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nearline/nearline/internal/fixture"
)

// Root returns the absolute path of the repository, where README.md is.
func Root() string { return fixture.Root() }

// Read returns the text of the file at rel (slash-separated, relative to
// the repository root) and fails the test when it cannot be read.
func Read(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("read %s: %v", rel, err)
	}
	return string(b)
}

// Files returns README.md and the documents of docs/, by their
// slash-separated paths from the root: what a reader is shown.
func Files(t testing.TB) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(Root(), "docs", "*.md"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("list docs/*.md: %d files, %v", len(matches), err)
	}
	files := []string{"README.md"}
	for _, m := range matches {
		files = append(files, "docs/"+filepath.Base(m))
	}
	return files
}

// Section returns the section of rel that heading starts, heading line
// included, and fails the test when rel has no such heading.
func Section(t testing.TB, rel, heading string) string {
	t.Helper()
	text, ok := section(Read(t, rel), heading)
	if !ok {
		t.Fatalf("%s has no heading %q", rel, heading)
	}
	return text
}

// SQL returns the bodies of the ```sql blocks of a section, in order.
func SQL(t testing.TB, rel, heading string) []string {
	t.Helper()
	blocks, err := fenced(Section(t, rel, heading), "sql")
	if err != "" {
		t.Fatalf("%s, %s: %s", rel, heading, err)
	}
	return blocks
}

// SQLAfter returns the first ```sql block of rel after the first line
// that contains phrase, for a query introduced by a sentence rather than a
// heading of its own.
func SQLAfter(t testing.TB, rel, phrase string) string {
	t.Helper()
	text := Read(t, rel)
	i := strings.Index(text, phrase)
	if i < 0 {
		t.Fatalf("%s has no %q", rel, phrase)
	}
	blocks, err := fenced(text[i:], "sql")
	if err != "" || len(blocks) == 0 {
		t.Fatalf("%s: no sql block after %q %s", rel, phrase, err)
	}
	return blocks[0]
}

// Table returns the first table of a section: one slice of cells per row,
// the header row first, the |---| separator left out. Cells are trimmed;
// backquotes are kept.
func Table(t testing.TB, rel, heading string) [][]string {
	t.Helper()
	var rows [][]string
	for _, line := range outsideFences(Section(t, rel, heading)) {
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if strings.Trim(strings.Join(cells, ""), "-: ") == "" {
			continue
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		t.Fatalf("%s, %s: no table", rel, heading)
	}
	return rows
}

// headingLevel returns the level of a Markdown heading line (1 to 6), or 0
// when line is not one.
func headingLevel(line string) int {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n >= len(line) || line[n] != ' ' {
		return 0
	}
	return n
}

// fence reports whether line opens or closes a fenced code block.
func fence(line string) bool {
	l := strings.TrimLeft(line, " ")
	return strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~")
}

// outsideFences returns the lines of text that are not inside a fenced
// code block (fence lines included, as they are not code).
func outsideFences(text string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		if fence(line) {
			in = !in
			out = append(out, line)
			continue
		}
		if !in {
			out = append(out, line)
		}
	}
	return out
}

// section finds heading (a whole line) outside code blocks and returns it
// with the lines up to the next heading of its level or above.
func section(text, heading string) (string, bool) {
	level := headingLevel(heading)
	var out []string
	in, found := false, false
	for _, line := range strings.Split(text, "\n") {
		if fence(line) {
			in = !in
		}
		if !in && !fence(line) {
			if l := headingLevel(line); l > 0 {
				if found && l <= level {
					break
				}
				if !found && line == heading {
					found = true
				}
			}
		}
		if found {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n"), found && level > 0
}

// fenced returns the bodies of the code blocks of text fenced as ```lang;
// err says what was malformed.
func fenced(text, lang string) (blocks []string, err string) {
	var body []string
	in, want := false, false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case !in && fence(line):
			in = true
			want = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "`~")) == lang
			body = body[:0]
		case in && fence(line):
			in = false
			if want {
				blocks = append(blocks, strings.Join(body, "\n")+"\n")
			}
		case in:
			body = append(body, line)
		}
	}
	if in && want {
		return blocks, "unterminated " + lang + " block"
	}
	return blocks, ""
}
