package calibrate

import (
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/workloads"
)

// recordRun runs a workload against an embedded simulator of the truth profile, in virtual
// time, and returns its run directory.
func recordRun(t *testing.T, truth *engine.Profile, workload string, over map[string]string) string {
	dir := filepath.Join(t.TempDir(), "run")
	synctest.Test(t, func(t *testing.T) {
		var os []workloads.Override
		for k, v := range over {
			os = append(os, workloads.Override{Key: k, Value: v, Source: "--set"})
		}
		w, err := workloads.Load(workloads.LoadOptions{Workload: workload, Overrides: os})
		require.NoError(t, err)
		clk, err := clock.New(1)
		require.NoError(t, err)
		sim := simtest.NewLocalServer(t, simserver.Options{Clock: clk, Profile: truth})
		defer sim.Close()
		_, err = harness.Run(t.Context(), harness.Options{Command: "run", Workload: w, Clock: clk, Dir: dir, HTTPClient: sim.Client(),
			Target: harness.Target{URL: sim.URL, Kind: results.Embedded, Profile: truth.Name, SimLag: sim.Sim.Engine()}})
		require.NoError(t, err)
	})
	return dir
}

// TestFromRecordedRunsRecoversTheSimulator fits --from's way from runs recorded against the
// simulator with a known profile (a known truth), in virtual time: two runs of 8 agents of the
// smoke workload, whose think and tool times keep the batch moving, with outputs forced to
// 64–128 tokens, and one of a single agent, whose requests have the server to themselves. The
// tokenizer ratio must come back within 0.1 %, the decode step at batches 1–8 within 10 %, and
// the prefill per token within 10 %.
func TestFromRecordedRunsRecoversTheSimulator(t *testing.T) {
	truth := engine.Ideal()
	truth.Name = "truth"
	truth.DecodeBase, truth.DecodePerSeq, truth.DecodePerKVTokenNs = 10*time.Millisecond, time.Millisecond, 20
	truth.PrefillBase, truth.PrefillPerToken = 5*time.Millisecond, 50*time.Microsecond
	var dirs []string
	for seed := range 2 {
		dirs = append(dirs, recordRun(t, truth, "smoke", map[string]string{"agents": "8", "rounds": "4", "seed": string(rune('1' + seed)),
			"request.reasoning_effort": "none", "pacer.slots": "8"}))
	}
	// One agent alone: every request has the server to itself, for the prefill.
	dirs = append(dirs, recordRun(t, truth, "smoke", map[string]string{"agents": "1", "rounds": "6", "request.reasoning_effort": "none"}))
	reqs, err := ReadRuns(dirs)
	require.NoError(t, err)
	fit := FitRuns(reqs, engine.Ideal())
	t.Log(fit.Summary())
	p := fit.Profile
	assert.InDelta(t, 1, p.TokenizerRatio, 0.001, "tokenizer_ratio")
	for _, b := range []int{1, 2, 4, 8} {
		k := b * 1500
		within(t, "decode step at B="+string(rune('0'+b)), truth.DecodeStep(b, k).Seconds(), p.DecodeStep(b, k).Seconds(), 0.1)
	}
	within(t, "prefill_per_token", truth.PrefillPerToken.Seconds(), p.PrefillPerToken.Seconds(), 0.1)
}
