package cli

import (
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/results"
)

// TestCompareLongContextWedge runs `agentsim compare --sim-fault long-context-wedge --speedup
// 100` in a bubble: the synthetic part passes 16/16, the agentic part (ocbrowse) stops making
// progress, and compare exits 3 with both parts and the conclusion in results.json. The harness
// watchdog ends the agentic part as soon as nothing can wake it. To keep the test fast, 8
// agents with outputs capped at 600 tokens wedge once contexts pass 24k tokens (round 2 on)
// instead of 30 agents writing 3–4.5k tokens a round, sampled every 5 s.
func TestCompareLongContextWedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "run")
		code, out, stderr := runCommand(t, (&compareCmd{}).command(),
			"--sim-fault", "long-context-wedge", "--speedup", "100", "--out", dir,
			"--agents", "8", "--set", "request.max_tokens=600", "--set", "sample_interval=5s", "--sim-fault-param", "threshold_tokens=24000")
		require.Equal(t, ExitVerdict, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
		assert.Regexp(t, `(?m)^RESULT N=16 max_tokens=128 wall=[\d.]+s ok=16/16 `, out)
		assert.Regexp(t, `(?m)^  verdict +healthy +(deadlock|stalled-streams|pacer-starvation)$`, out)
		assert.Regexp(t, `(?m)^conclusion: synthetic healthy \(16/16 in [\d.]+ s\); agentic stopped making progress in round \d`, out)
		assert.Contains(t, out, "the fault shows only under long, growing contexts")

		res, err := results.Read(dir)
		require.NoError(t, err)
		assert.Equal(t, "compare", res.Command)
		assert.Equal(t, "ocbrowse", res.Workload)
		require.Contains(t, res.Parts, "synthetic")
		require.Contains(t, res.Parts, "agentic")
		syn, ag := res.Parts["synthetic"], res.Parts["agentic"]
		assert.Equal(t, "bench", syn.Command)
		assert.Equal(t, 16, syn.Requests.OK)
		assert.Equal(t, results.Healthy, syn.Verdict.Kind)
		assert.NotContains(t, []string{"healthy", "slow"}, ag.Verdict.Kind, "agentic verdict %+v", ag.Verdict)
		assert.Equal(t, ag.Verdict.Kind, res.Verdict.Kind, "the comparison's verdict is the agentic one")
		assert.Equal(t, res.Conclusion, res.Verdict.Summary)
		assert.NotEmpty(t, res.Conclusion)
		assert.FileExists(t, filepath.Join(dir, "synthetic", "results.json"))
		assert.FileExists(t, filepath.Join(dir, "agentic", "events.jsonl"))
	})
}

// TestCompareHealthy runs compare with the small smoke workload on a healthy simulator: both
// parts pass and it exits 0.
func TestCompareHealthy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "run")
		code, out, stderr := runCommand(t, (&compareCmd{}).command(),
			"--workload", "smoke", "--concurrency", "4", "--speedup", "20", "--out", dir)
		require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
		assert.Regexp(t, `(?m)^conclusion: synthetic healthy \(4/4 in [\d.]+ s\); agentic healthy .* — the server handles both$`, out)
		res, err := results.Read(dir)
		require.NoError(t, err)
		assert.Equal(t, results.Healthy, res.Verdict.Kind)
		assert.Equal(t, 4, res.Parts["synthetic"].Bench.Concurrency)
	})
}
