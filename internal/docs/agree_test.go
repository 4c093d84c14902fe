package docs

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// operatorFiles are the documents and files an operator copies settings
// from: the docs, .env.example and the systemd unit's settings.
func operatorFiles(t *testing.T) []string {
	t.Helper()
	return append(Files(t), ".env.example", "contrib/systemd/nearline.env")
}

// TestDocsNameOneMainnetRPCEndpoint: README.md, docs/, .env.example and
// contrib/ name one public mainnet JSON-RPC endpoint of FastNEAR, the one
// `run -h`'s mainnet example uses.
func TestDocsNameOneMainnetRPCEndpoint(t *testing.T) {
	t.Parallel()
	host := regexp.MustCompile(`https://([a-z0-9.-]*fastnear\.com)`)
	seen := map[string][]string{}
	for _, rel := range operatorFiles(t) {
		for _, m := range host.FindAllStringSubmatch(Read(t, rel), -1) {
			if strings.Contains(m[1], "neardata") {
				continue // the document upstream, not JSON-RPC
			}
			if !slices.Contains(seen[m[1]], rel) {
				seen[m[1]] = append(seen[m[1]], rel)
			}
		}
	}
	require.Len(t, seen, 1, "mainnet JSON-RPC endpoints named, by file: %v", seen)
	for h := range seen {
		require.Contains(t, Read(t, "cmd/nearline/cmd_index.go"), "https://"+h, "run -h's mainnet example names another endpoint")
	}
}

// TestDocsGiveOneRetentionFigure: where the docs say how long a regular
// node keeps blocks, they say five epochs and the same days, the days
// mainnet's five epochs of 43,200 heights at ~0.6 s make.
func TestDocsGiveOneRetentionFigure(t *testing.T) {
	t.Parallel()
	want := strconv.FormatFloat(5*43200*0.6/86400, 'f', -1, 64)
	days := regexp.MustCompile(`epochs[^.]*?about ([0-9.]+) days`)
	var found int
	for _, rel := range operatorFiles(t) {
		text := strings.Join(strings.Fields(Read(t, rel)), " ")
		text = strings.ReplaceAll(text, "# ", "")
		require.False(t, strings.Contains(text, "few epochs"), "%s: say how many epochs a regular node keeps, not a few", rel)
		for _, m := range days.FindAllStringSubmatch(text, -1) {
			found++
			require.Equal(t, want, m[1], "%s: a regular node's retention", rel)
		}
	}
	require.GreaterOrEqual(t, found, 3)
}

// TestDocsGiveOneFirstRunRecipe: the README, docs/operator.md and
// docs/simulator.md show the same command first: their first code block
// that runs nearline holds it.
func TestDocsGiveOneFirstRunRecipe(t *testing.T) {
	t.Parallel()
	const trial = "go run ./cmd/nearline run --sim"
	for _, rel := range []string{"README.md", "docs/operator.md", "docs/simulator.md"} {
		blocks := strings.Split(Read(t, rel), "```")
		first := ""
		for i := 1; i < len(blocks); i += 2 { // the insides of the fences
			if strings.Contains(blocks[i], "nearline") {
				first = blocks[i]
				break
			}
		}
		require.Contains(t, first, trial, "%s: the first code block that runs nearline", rel)
	}
}

// TestReadmeStatesDiskBesideTheMainnetCommand: the README's mainnet
// section gives the disk a day and a year that docs/performance.md's
// figure per block makes at a block every ~0.6 s, and its day and year
// rows say the same.
func TestReadmeStatesDiskBesideTheMainnetCommand(t *testing.T) {
	t.Parallel()
	perf := Read(t, "docs/performance.md")
	row := regexp.MustCompile(`\*\*Nearline on disk\*\* \(tables, TOAST, indexes\) \| [0-9,.]+ KiB \| \*\*([0-9,.]+) KiB\*\*`).FindStringSubmatch(perf)
	require.NotNil(t, row, "docs/performance.md has no current figure per block")
	kib, err := strconv.ParseFloat(strings.ReplaceAll(row[1], ",", ""), 64)
	require.NoError(t, err)
	perDay := kib * 86400 / 0.6 / (1 << 20) // GiB
	perYear := perDay * 365 / 1024          // TiB
	day := fmt.Sprintf("~%.0f GiB a day", perDay)
	year := fmt.Sprintf("~%.1f TiB a year", perYear)
	mainnet := Section(t, "README.md", "## Follow mainnet")
	require.Contains(t, mainnet, day+", "+year, "the README's mainnet section, at %s KiB a block", row[1])
	require.Less(t, strings.Index(mainnet, "--upstream-rate 3"), strings.Index(mainnet, day), "the figure is beside the command")
	require.Contains(t, perf, fmt.Sprintf("(%.0f GiB)", perDay))
	require.Contains(t, perf, fmt.Sprintf("%.1f TiB)", perYear))
	require.False(t, math.IsNaN(perDay))
}
