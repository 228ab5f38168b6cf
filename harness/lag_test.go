package harness

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// A run reports its own scheduling lag; in a bubble every wait ends exactly when due.
func TestRunReportsHarnessLag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, _ := runSim(t, t.Context(), simCase{workload: "smoke", speedup: 20})
		h := res.Harness
		if assert.NotNil(t, h) {
			assert.Positive(t, h.Lag.N, "waits measured")
			assert.Zero(t, h.Lag.Max, "no lag in a bubble")
			assert.Empty(t, h.Warning)
		}
	})
}

// TestSamplerFallingBehind: a sample more than one sample interval late because the server's
// /metrics took long is warned about once, with how late it was; one late for the machine's
// pace is left to the one line about the pace, which counts its tick's lateness; lateness
// under a millisecond is not recorded.
func TestSamplerFallingBehind(t *testing.T) {
	w := workloads.Defaults()
	clk, err := clock.New(300)
	require.NoError(t, err)
	r := &run{o: Options{Workload: &w, Clock: clk}}
	for _, ts := range []float64{0.75, 1.5, 2.7, 12.7, 13.45, 40} {
		s := events.Sample{TS: ts, LateS: r.lateness(ts)}
		assert.Empty(t, r.checkLate(s), "t=%v s: no scrape made it late, the machine did", ts)
		if ts == 1.5 {
			assert.Zero(t, s.LateS, "on time")
		}
		if ts == 2.7 {
			assert.InDelta(t, 0.45, s.LateS, 1e-9, "late, within one interval")
		}
	}
	r.scrapeS = 9
	assert.Equal(t, "warning: the sampler fell behind: the sample at t=13 s came 9.9 s after the previous one, 9.2 s later than due (sample_interval 750ms); "+
		"samples.jsonl misses what happened in between; the server's /metrics took 9.0 s (simulated) to answer",
		r.checkLate(events.Sample{TS: 12.7, LateS: 9.2}), "a slow scrape, not the speedup, made this sample late")
	assert.Empty(t, r.checkLate(events.Sample{TS: 40, LateS: 20}), "once")

	embedded := &run{o: Options{Workload: &w, Clock: clk, Target: Target{Kind: results.Embedded}}, scrapeS: 9}
	assert.Empty(t, embedded.checkLate(events.Sample{TS: 12.7, LateS: 9.2}),
		"the embedded simulator's scrape runs in this process: its slowness is the machine's pace")
}
