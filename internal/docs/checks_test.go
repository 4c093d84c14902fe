package docs

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// markdownFiles are the documents whose links and lines are checked.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	return append(Files(t), "CHANGELOG.md")
}

var (
	inlineCode = regexp.MustCompile("`[^`]*`")
	link       = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// links returns the targets of the inline links of text, outside code.
func links(text string) []string {
	var out []string
	for _, line := range outsideFences(text) {
		for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// anchors returns the anchors GitHub gives the headings of text: lower
// case, punctuation dropped, spaces as hyphens, a repeated one numbered.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range outsideFences(text) {
		level := headingLevel(line)
		if level == 0 {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(line[level:])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func TestAnchorsFollowGitHub(t *testing.T) {
	t.Parallel()
	got := anchors("# `nearline sim`: a simulated NEAR node\n## Split backfills\n## Split backfills\n```\n# code\n```\n## Results (2,000 heights)")
	require.Equal(t, map[string]bool{
		"nearline-sim-a-simulated-near-node": true, "split-backfills": true, "split-backfills-1": true,
		"results-2000-heights": true,
	}, got)
}

// TestEveryRelativeLinkResolves: every link of README.md, CHANGELOG.md and
// docs/*.md to a file of the repository names one that exists, and every
// #anchor (in the same file or in another Markdown file) names a heading.
func TestEveryRelativeLinkResolves(t *testing.T) {
	t.Parallel()
	var checked int
	for _, rel := range markdownFiles(t) {
		text := Read(t, rel)
		for _, target := range links(text) {
			if scheme.MatchString(target) {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			file := rel
			if path != "" {
				file = filepath.ToSlash(filepath.Join(filepath.Dir(rel), path))
				_, err := os.Stat(filepath.Join(Root(), filepath.FromSlash(file)))
				if !assertNoError(t, err, "%s links to %s, which does not exist", rel, target) {
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			if !anchors(Read(t, file))[anchor] {
				t.Errorf("%s links to %s: %s has no heading with anchor #%s", rel, target, file, anchor)
			}
		}
	}
	require.Greater(t, checked, 50, "links checked: the link pattern may have stopped matching")
}

func assertNoError(t *testing.T, err error, format string, args ...any) bool {
	t.Helper()
	if err != nil {
		t.Errorf(format, args...)
		return false
	}
	return true
}

// TestReadmeFitsOneScreen: README.md is the first screen, not the manual.
func TestReadmeFitsOneScreen(t *testing.T) {
	t.Parallel()
	lines := strings.Count(strings.TrimRight(Read(t, "README.md"), "\n"), "\n") + 1
	require.LessOrEqual(t, lines, 250, "README.md has %d lines; move the detail into docs/", lines)
}

// TestDocLinesStayReadable: no line of prose or table in the docs is
// longer than maxLine characters (a table row that long is a paragraph in
// the wrong place). Code blocks are left as they are.
func TestDocLinesStayReadable(t *testing.T) {
	t.Parallel()
	const maxLine = 400
	for _, rel := range markdownFiles(t) {
		in := false
		for i, line := range strings.Split(Read(t, rel), "\n") {
			if fence(line) {
				in = !in
			}
			if n := len([]rune(line)); !in && n > maxLine {
				t.Errorf("%s: line %d (outside code) has %d characters, more than %d: %.80s...", rel, i+1, n, maxLine, line)
			}
		}
	}
}

var testName = regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*`)

// TestDocsNameTestsThatExist: every test, benchmark and fuzz target that
// README.md or docs/ names as holding a promise is a function of a
// _test.go file of the repository (CHANGELOG.md, being history, may name
// tests since renamed).
func TestDocsNameTestsThatExist(t *testing.T) {
	t.Parallel()
	defined := map[string]bool{}
	funcLine := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*)\(`)
	for _, text := range goFiles(t, "_test.go") {
		for _, m := range funcLine.FindAllStringSubmatch(text, -1) {
			defined[m[1]] = true
		}
	}
	var named int
	for _, rel := range Files(t) {
		var missing []string
		for _, name := range testName.FindAllString(Read(t, rel), -1) {
			named++
			if !defined[name] && !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
		}
		require.Empty(t, missing, "%s names tests that no _test.go file defines", rel)
	}
	require.Greater(t, named, 30)
}

// goFiles returns the text of every Go file of the repository whose name
// ends in suffix (outside .git and testdata), by its slash-separated path
// from the root.
func goFiles(t *testing.T, suffix string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(Root(), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, suffix) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(Root(), path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	require.NoError(t, err)
	return files
}

// exists reports whether the file at rel (slash-separated, from the
// root) exists.
func exists(rel string) bool {
	_, err := os.Stat(filepath.Join(Root(), filepath.FromSlash(rel)))
	return err == nil
}

// anchorOf is the anchor GitHub gives a heading of that text.
func anchorOf(heading string) string {
	for a := range anchors("# " + heading) {
		return a
	}
	return ""
}

var (
	codeDocRef    = regexp.MustCompile(`([A-Za-z0-9_./-]+\.md)\b(?:, "([^"]+)")?`)
	codeReadmeRef = regexp.MustCompile(`\(README, "([^"]+)"\)`)
)

// TestCodeNamesDocsThatExist: a Markdown file a Go file names (in a
// comment or a message) exists, from the root or from the Go file's
// folder, and a section it names as (docs/<file>, "Heading") or (README,
// "Heading") is a heading of that file: documentation moved or renamed is
// not left pointed at from the code.
func TestCodeNamesDocsThatExist(t *testing.T) {
	t.Parallel()
	var named int
	for rel, text := range goFiles(t, ".go") {
		var refs [][2]string // file, heading
		for _, m := range codeDocRef.FindAllStringSubmatch(text, -1) {
			refs = append(refs, [2]string{m[1], m[2]})
		}
		for _, m := range codeReadmeRef.FindAllStringSubmatch(text, -1) {
			refs = append(refs, [2]string{"README.md", m[1]})
		}
		for _, ref := range refs {
			named++
			file := ref[0]
			if !exists(file) {
				file = path.Join(path.Dir(rel), ref[0])
			}
			if !exists(file) {
				t.Errorf("%s names %s, which does not exist", rel, ref[0])
				continue
			}
			if ref[1] != "" && !anchors(Read(t, file))[anchorOf(ref[1])] {
				t.Errorf("%s names section %q of %s, which has no such heading", rel, ref[1], file)
			}
		}
	}
	require.Greater(t, named, 20, "references found: the pattern may have stopped matching")
}
