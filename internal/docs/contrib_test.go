package docs

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/nearline/nearline/internal/metrics"
)

// metricName matches the names of Nearline's metrics, of the Go runtime's
// and the process's (internal/metrics registers both), and Prometheus's
// own up, in a PromQL expression.
var metricName = regexp.MustCompile(`\b(?:nearline|go|process)_[a-z0-9_]+\b|\bup\b`)

// exportedMetrics are the names Nearline exports: the nearline_* names of
// the packages that register Prometheus metrics, and what
// internal/metrics' registry gathers of the runtime and the process.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{"up": true} // Prometheus's own, per target
	literal := regexp.MustCompile(`"(nearline_[a-z0-9_]+)"`)
	for path, text := range goFiles(t, ".go") {
		if strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, "bench/") ||
			!strings.Contains(text, `"github.com/prometheus/client_golang/prometheus"`) {
			continue
		}
		for _, m := range literal.FindAllStringSubmatch(text, -1) {
			names[m[1]] = true
		}
	}
	families, err := metrics.NewRegistry().Gather()
	require.NoError(t, err)
	for _, f := range families {
		names[f.GetName()] = true
	}
	return names
}

// contribExprs returns the PromQL expressions of the Prometheus rules and
// the Grafana dashboard in contrib/, by file.
func contribExprs(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	const rulesFile = "contrib/prometheus/nearline-alerts.yml"
	require.NoError(t, yaml.Unmarshal([]byte(Read(t, rulesFile)), &rules))
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			require.NotEmpty(t, r.Expr, "alert %s has no expr", r.Alert)
			out[rulesFile] = append(out[rulesFile], r.Expr)
		}
	}
	const dashboard = "contrib/grafana/nearline-dashboard.json"
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal([]byte(Read(t, filepath.ToSlash(dashboard))), &dash))
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, tg := range p.Targets {
			out[dashboard] = append(out[dashboard], tg.Expr)
		}
	}
	return out
}

// TestContribNamesMetricsThatExist: every metric the alert rules and the
// dashboard in contrib/ name is one Nearline exports (a histogram's
// _bucket, _sum and _count series by its name), and both cover lag,
// blocks per second, upstream errors, request latency and request errors.
func TestContribNamesMetricsThatExist(t *testing.T) {
	t.Parallel()
	exported := exportedMetrics(t)
	require.True(t, exported["nearline_indexed_height"] && exported["nearline_rpc_requests_total"] && exported["go_goroutines"],
		"the exported names were not found: %v", exported)
	for file, exprs := range contribExprs(t) {
		var used []string
		for _, e := range exprs {
			for _, name := range metricName.FindAllString(e, -1) {
				base := name
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(name, suffix); ok && exported[b] {
						base = b
					}
				}
				require.True(t, exported[base], "%s names %s, which Nearline does not export (in %q)", file, name, e)
				used = append(used, base)
			}
		}
		for topic, names := range map[string][]string{
			"lag":              {"nearline_head_height", "nearline_indexed_height"},
			"blocks/s":         {"nearline_indexed_blocks_total"},
			"upstream errors":  {"nearline_upstream_errors_total"},
			"request latency":  {"nearline_rpc_request_seconds"},
			"request failures": {"nearline_rpc_requests_total"},
		} {
			for _, n := range names {
				require.True(t, slices.Contains(used, n), "%s does not cover %s: no %s", file, topic, n)
			}
		}
	}
}
