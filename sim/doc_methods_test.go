package sim

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/docs"
)

// TestSimulatorDocListsCallableViewMethods calls, on the demo's chain
// (the default config, as `run --sim` makes it), every view method
// docs/simulator.md lists with its arguments, as the doc's example does:
// each answers bytes that decode as JSON.
func TestSimulatorDocListsCallableViewMethods(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.BlockTime, cfg.MaxHeight = 0, 300
	_, srv := startNode(t, cfg)
	call := regexp.MustCompile("`([a-z_]+) (\\{[^`]*\\})`")
	rows := docs.Table(t, "docs/simulator.md", "## Contracts and their methods")
	var called int
	for _, row := range rows[1:] {
		require.Len(t, row, 4, "row %v", row)
		account := strings.Trim(row[0], "`")
		for _, m := range call.FindAllStringSubmatch(row[3], -1) {
			raw := rpcResult(t, srv.URL, "query", map[string]any{"request_type": "call_function", "finality": "final",
				"account_id": account, "method_name": m[1], "args_base64": base64.StdEncoding.EncodeToString([]byte(m[2]))})
			var res struct {
				Bytes []int `json:"result"`
			}
			require.NoError(t, json.Unmarshal(raw, &res), "%s.%s", account, m[1])
			decoded := make([]byte, len(res.Bytes))
			for i, b := range res.Bytes {
				decoded[i] = byte(b)
			}
			require.True(t, json.Valid(decoded), "%s.%s(%s) answered %q", account, m[1], m[2], decoded)
			require.NotEqual(t, "null", string(decoded), "%s.%s(%s) found nothing on the demo", account, m[1], m[2])
			called++
		}
	}
	require.GreaterOrEqual(t, called, 10)
}
