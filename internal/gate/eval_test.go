package gate

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/results"
)

// measurement makes a run of n requests whose end-to-end latencies are drawn (seeded) from a
// log-normal distribution with median median seconds, its results summarised from them.
func measurement(seed uint64, n int, median float64, verdict results.VerdictKind) *Measurement {
	r := rand.New(rand.NewPCG(seed, 1))
	e2e := make([]float64, n)
	for i := range e2e {
		e2e[i] = median * math.Exp(0.3*r.NormFloat64())
	}
	res := &results.Results{Verdict: results.Verdict{Kind: verdict}}
	res.Latency.E2E = results.Summarize(slices.Clone(e2e))
	res.Requests.OK = n
	return &Measurement{Results: res, Observations: results.Observations{E2E: e2e}}
}

func rules(t *testing.T, m map[string]any) Thresholds {
	t.Helper()
	th, err := Parse(m)
	require.NoError(t, err)
	return th
}

// TestEvaluate checks each way a rule comes out.
func TestEvaluate(t *testing.T) {
	base := measurement(1, 200, 10, results.Healthy)
	same := measurement(2, 200, 10, results.Healthy) // another sample of the same distribution
	slower := measurement(3, 200, 13, results.Slow)  // 30 % slower
	tiny := measurement(4, 6, 10.9, results.Healthy) // few requests: a wide interval
	for _, tc := range []struct {
		name      string
		rule      map[string]any
		base, new *Measurement
		status    Status
		why       string
	}{
		// Noise between two samples of one distribution passes a 10 % margin.
		{"same distribution", map[string]any{"e2e.p90": "<= 1.10 * baseline"}, base, same, Pass, "within"},
		// A 30 % slowdown breaks it, its interval wholly beyond the limit.
		{"slower", map[string]any{"e2e.p90": "<= 1.10 * baseline"}, base, slower, Fail, `breaks "<= 1.10 * baseline"`},
		// A point beyond the limit whose interval reaches it is noise.
		{"within noise", map[string]any{"e2e.p50": "<= 1.0 * baseline"}, base, tiny, Pass, "within noise"},
		// An absolute limit compares the measured value.
		{"absolute", map[string]any{"e2e.p90": "< 12s"}, nil, slower, Fail, `e2e.p90 = `},
		// A relative rule without a baseline is skipped.
		{"no baseline", map[string]any{"e2e.p90": "<= 1.10 * baseline"}, nil, same, Skip, "no baseline run"},
		// The verdict.
		{"verdict allowed", map[string]any{"verdict": []any{"healthy", "slow"}}, base, slower, Pass, "one of [healthy, slow]"},
		{"verdict refused", map[string]any{"verdict": []any{"healthy"}}, base, slower, Fail, "verdict = slow, baseline healthy: not one of [healthy]"},
	} {
		rep := Evaluate(rules(t, tc.rule), tc.base, tc.new)
		require.Len(t, rep.Results, 1)
		got := rep.Results[0]
		assert.Equal(t, tc.status, got.Status, "%s: %s", tc.name, got.Why)
		assert.Contains(t, got.Why, tc.why, tc.name)
	}
}

// TestBootstrapDeterministic checks that the same two runs give the same interval, that it
// holds the point change, and that a change of nothing is no significant change.
func TestBootstrapDeterministic(t *testing.T) {
	base, new := measurement(1, 300, 10, results.Healthy), measurement(2, 300, 12, results.Healthy)
	f, _ := Lookup("e2e.p90")
	a, b := Compare(f, base, new), Compare(f, base, new)
	assert.Equal(t, [3]float64{a.Relative, a.Low, a.High}, [3]float64{b.Relative, b.Low, b.High}, "the same runs, another interval")
	require.True(t, a.HasCI)
	assert.True(t, a.Low <= a.Relative && a.Relative <= a.High, "%s", a)
	assert.True(t, a.Significant(), "%s", a)
	same := Compare(f, base, base)
	assert.False(t, same.Significant(), "%s", same)
	assert.True(t, strings.HasPrefix(same.String(), "no significant change (95 % CI"), same.String())
	fmax, _ := Lookup("e2e.max")
	assert.False(t, Compare(fmax, base, new).HasCI, "a maximum has no bootstrap interval")
}

// TestRenderings checks the JUnit and Markdown renderings of a report with a failure.
func TestRenderings(t *testing.T) {
	rep := Evaluate(rules(t, map[string]any{"e2e.p90": "<= 1.10 * baseline", "verdict": []any{"healthy", "slow"}}),
		measurement(1, 200, 10, results.Healthy), measurement(3, 200, 13, results.Slow))
	var j, m strings.Builder
	require.NoError(t, rep.WriteJUnit(&j, "gate"))
	assert.Contains(t, j.String(), `<testsuites name="gate" tests="2" failures="1" skipped="0">`)
	assert.Contains(t, j.String(), `<testcase name="e2e.p90 &lt;= 1.10 * baseline" classname="agentsim.thresholds">`)
	assert.Contains(t, j.String(), `<failure message="e2e.p90 = `)
	require.NoError(t, rep.WriteMarkdown(&m, "gate"))
	assert.Contains(t, m.String(), "### gate — thresholds: 1 passed, 1 failed")
	assert.Contains(t, m.String(), "| ❌ **fail** | `e2e.p90` | `<= 1.10 * baseline` |")
	assert.Contains(t, m.String(), "| ✅ pass | `verdict` | `[healthy, slow]` | healthy | slow |")
}

// BenchmarkCompareLarge compares two runs of 100,000 requests each on one latency figure.
func BenchmarkCompareLarge(b *testing.B) {
	base, new := measurement(1, 100_000, 10, results.Healthy), measurement(2, 100_000, 10, results.Healthy)
	f, _ := Lookup("e2e.p90")
	for b.Loop() {
		Compare(f, base, new)
	}
}

// TestStatsOf checks that the one-pass statistics of a resample agree with each statistic
// computed on its own.
func TestStatsOf(t *testing.T) {
	r := newResampler(measurement(7, 500, 3, results.Healthy).Observations.E2E, "t")
	stats := []stat{{statQuantile, 0.5}, {statQuantile, 0.9}, {statQuantile, 0.99}, {statMean, 0}, {statMax, 0}, {statSum, 0}}
	out := make([]float64, len(stats))
	for range 20 {
		counts := r.next()
		statsOf(r.sorted, counts, stats, out)
		for i, s := range stats {
			assert.InDelta(t, s.of(r.sorted, counts), out[i], 1e-9, "stat %+v", s)
		}
	}
}
