package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/agentsim/agentsim/results"
)

// TestParseRules checks each form a rule may take and the Rule it becomes.
func TestParseRules(t *testing.T) {
	for _, tc := range []struct {
		figure string
		raw    any
		want   Rule
	}{
		// A relative limit.
		{"e2e.p90", "<= 1.10 * baseline", Rule{Figure: "e2e.p90", Text: "<= 1.10 * baseline", Op: LessEqual, Factor: 1.10}},
		// The factor on the right, and no spaces.
		{"tpot.p50", "<baseline*1.2", Rule{Figure: "tpot.p50", Text: "<baseline*1.2", Op: Less, Factor: 1.2}},
		// The baseline itself.
		{"requests.failed", "<= baseline", Rule{Figure: "requests.failed", Text: "<= baseline", Op: LessEqual, Factor: 1}},
		// A duration with its unit.
		{"ttft.p99", "< 30s", Rule{Figure: "ttft.p99", Text: "< 30s", Op: Less, Value: 30}},
		{"itl.mean", "< 250ms", Rule{Figure: "itl.mean", Text: "< 250ms", Op: Less, Value: 0.25}},
		// A ratio as a fraction and as a percentage.
		{"requests.failed_ratio", "< 0.01", Rule{Figure: "requests.failed_ratio", Text: "< 0.01", Op: Less, Value: 0.01}},
		{"requests.failed_ratio", "< 1%", Rule{Figure: "requests.failed_ratio", Text: "< 1%", Op: Less, Value: 0.01}},
		// A rate, with and without its unit.
		{"tokens.output_per_second", ">= 500 tok/s", Rule{Figure: "tokens.output_per_second", Text: ">= 500 tok/s", Op: GreaterEqual, Value: 500}},
		{"tokens.output_per_second", "> 500", Rule{Figure: "tokens.output_per_second", Text: "> 500", Op: Greater, Value: 500}},
	} {
		th, err := Parse(map[string]any{tc.figure: tc.raw})
		require.NoError(t, err, "Parse(%s: %v)", tc.figure, tc.raw)
		rules := th.Rules()
		require.Len(t, rules, 1)
		assert.InDelta(t, tc.want.Value, rules[0].Value, 1e-12, "Parse(%s: %v).Value", tc.figure, tc.raw)
		rules[0].Value = tc.want.Value
		assert.Equal(t, tc.want, rules[0], "Parse(%s: %v)", tc.figure, tc.raw)
	}
}

// TestParseVerdictAndLists checks the verdict's list of kinds and a list of rules for one
// figure, from YAML as a workload file gives them, and that they render back the same.
func TestParseVerdictAndLists(t *testing.T) {
	const src = `e2e.p90: ["<= 1.10 * baseline", "< 60s"]
verdict: [healthy, slow]
`
	var raw map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(src), &raw))
	th, err := Parse(raw)
	require.NoError(t, err)
	rules := th.Rules()
	require.Len(t, rules, 3)
	assert.Equal(t, "e2e.p90 <= 1.10 * baseline", rules[0].String())
	assert.Equal(t, "e2e.p90 < 60s", rules[1].String())
	assert.Equal(t, []results.VerdictKind{results.Healthy, results.Slow}, rules[2].Allowed)

	out, err := yaml.Marshal(th)
	require.NoError(t, err)
	back, err := Parse(mustYAML(t, string(out)))
	require.NoError(t, err)
	assert.Equal(t, th, back, "rendered as\n%s", out)
}

func mustYAML(t *testing.T, s string) any {
	var v any
	require.NoError(t, yaml.Unmarshal([]byte(s), &v))
	return v
}

// TestParseRejects maps each kind of bad rule to its message: the key, the value and what is
// allowed.
func TestParseRejects(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want []string
	}{
		// An unknown figure, with the nearest name.
		{`e2e.p95: "< 1s"`, []string{`thresholds.e2e.p95: unknown figure "e2e.p95": did you mean "e2e.p90"?`, "KIND.STAT", "requests.failed_ratio"}},
		// A duration without its unit.
		{`ttft.p99: "< 30"`, []string{`thresholds.ttft.p99: "< 30" is not allowed: want <, <=, > or >= followed by a duration with its unit (30s, 250ms, 2m)`}},
		// No operator.
		{`e2e.p90: "1.1 * baseline"`, []string{`thresholds.e2e.p90: "1.1 * baseline" is not allowed`, `"F * baseline" (F > 0)`}},
		// A factor that is not positive.
		{`e2e.p90: "<= 0 * baseline"`, []string{`thresholds.e2e.p90: "<= 0 * baseline" is not allowed`}},
		// A number, not a rule.
		{`requests.failed: 3`, []string{`thresholds.requests.failed: 3 is not allowed`}},
		// A negative limit.
		{`requests.failed_ratio: "< -1"`, []string{`thresholds.requests.failed_ratio: "< -1" is not allowed: want <, <=, > or >= followed by a fraction (0.01) or a percentage (1%)`}},
		// An unknown verdict kind.
		{`verdict: [healthy, fine]`, []string{`thresholds.verdict: "fine" is not allowed: want a list of verdict kinds from pacer-starvation, deadlock, harness-stopped, stalled-streams, server-serialized, errors, slow, healthy`}},
		// An empty list.
		{`e2e.p90: []`, []string{`thresholds.e2e.p90: [] is not allowed`}},
	} {
		_, err := Parse(mustYAML(t, tc.raw))
		require.Error(t, err, "Parse(%s)", tc.raw)
		for _, w := range tc.want {
			assert.Contains(t, err.Error(), w, "Parse(%s)", tc.raw)
		}
	}
	// Every problem is reported at once.
	_, err := Parse(mustYAML(t, "e2e.p95: '< 1s'\nttft.p99: '< 30'\n"))
	require.Error(t, err)
	assert.Len(t, strings.Split(err.Error(), "\n"), 2, "%v", err)
}

// TestParseYAML checks the --thresholds file: one thresholds: section and nothing else.
func TestParseYAML(t *testing.T) {
	th, err := ParseYAML([]byte("thresholds:\n  e2e.p90: '<= 1.1 * baseline'\n"))
	require.NoError(t, err)
	assert.Len(t, th.Rules(), 1)
	_, err = ParseYAML([]byte("threshold:\n  e2e.p90: '<= 1.1 * baseline'\n"))
	assert.ErrorContains(t, err, `unknown key "threshold": want only thresholds:`)
	_, err = ParseYAML([]byte("agents: 3\n"))
	assert.ErrorContains(t, err, `unknown key "agents"`)
}

// TestWith checks that a --thresholds file replaces the workload's rules for the figures it
// names and keeps the others.
func TestWith(t *testing.T) {
	w, err := Parse(map[string]any{"e2e.p90": "<= 1.1 * baseline", "ttft.p99": "< 30s"})
	require.NoError(t, err)
	f, err := Parse(map[string]any{"e2e.p90": "<= 1.5 * baseline"})
	require.NoError(t, err)
	var got []string
	for _, r := range w.With(f).Rules() {
		got = append(got, r.String())
	}
	assert.Equal(t, []string{"ttft.p99 < 30s", "e2e.p90 <= 1.5 * baseline"}, got)
}

// TestFigureNames checks that every name is unique and that every latency figure reads the
// summary results.json holds.
func TestFigureNames(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Names() {
		assert.False(t, seen[n], "figure %s twice", n)
		seen[n] = true
	}
	r := &results.Results{Latency: results.Latency{E2E: results.Summary{P90: 4.5, Mean: 2}}}
	f, ok := Lookup("e2e.p90")
	require.True(t, ok)
	assert.Equal(t, 4.5, f.Value(r))
	f, _ = Lookup("e2e.mean")
	assert.Equal(t, 2.0, f.Value(r))
}

// TestFiguresDocumented checks that docs/gate.md names every figure and every latency kind.
func TestFiguresDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "gate.md"))
	require.NoError(t, err)
	for _, f := range counters {
		name := f.Name
		if strings.HasPrefix(name, "tokens.") && name != "tokens.output_per_second" && name != "tokens.prompt" {
			name = "." + strings.TrimPrefix(name, "tokens.") // listed as `tokens.prompt`, `.cached`, …
		}
		assert.Contains(t, string(doc), "`"+name+"`", "docs/gate.md does not list %s", f.Name)
	}
	for _, k := range latencyKinds {
		assert.Contains(t, string(doc), "| `"+k.name+"` |", "docs/gate.md does not list latency kind %s", k.name)
	}
}
