package docs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const sample = "# Title\n\nintro\n\n## First\n\ntext\n\n```sh\n# not a heading\n```\n\n### Inner\n\n```sql\nSELECT 1;\n```\n\n" +
	"| a | b |\n|---|---|\n| `x` | y |\n\n## Second\n\n```sql\nSELECT 2;\n```\n"

func TestSectionEndsAtTheNextHeadingOfItsLevel(t *testing.T) {
	t.Parallel()
	first, ok := section(sample, "## First")
	require.True(t, ok)
	require.Contains(t, first, "# not a heading", "a comment in a code block is not a heading")
	require.Contains(t, first, "### Inner", "a deeper heading stays inside")
	require.NotContains(t, first, "## Second")
	inner, ok := section(sample, "### Inner")
	require.True(t, ok)
	require.NotContains(t, inner, "## Second")
	_, ok = section(sample, "## Missing")
	require.False(t, ok)
	_, ok = section(sample, "# not a heading")
	require.False(t, ok, "a line inside a code block is never found as a heading")

	blocks, err := fenced(first, "sql")
	require.Empty(t, err)
	require.Equal(t, []string{"SELECT 1;\n"}, blocks)
	_, err = fenced("```sql\nSELECT", "sql")
	require.NotEmpty(t, err)
}

// TestDocsFilesAreRead checks the exported readers on the real files:
// every SQL block and table they return comes from the section asked for.
func TestDocsFilesAreRead(t *testing.T) {
	t.Parallel()
	queries := SQL(t, "docs/database.md", "## Example queries")
	require.GreaterOrEqual(t, len(queries), 8)
	for _, q := range queries {
		require.Contains(t, strings.ToUpper(q), "SELECT")
	}
	plan := Table(t, "docs/database.md", "## A distributed PostgreSQL")
	require.Equal(t, []string{"table", "placement", "distribution column", "colocated with"}, plan[0])
	require.Contains(t, SQLAfter(t, "docs/database.md", "The shard that holds an account at a height"), "boundary_accounts")
}
