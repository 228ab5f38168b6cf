package diagnose

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// TestDoubtWhenTheLagCouldExplain: a request went 42 s without a byte (stall_after 20 s) in a
// run whose simulator lag reached 50 s at --speedup 10 (as 10,000 agents on ideal beside two
// CPU hogs: "received no byte from t=17 s to t=59 s", simulator lag p99 50 s). The lag could
// explain the stall: the verdict is what the run was without it (healthy), says it is
// unreliable and why, and quotes the stall it set aside. The same stall beside a lag of
// milliseconds stands.
func TestDoubtWhenTheLagCouldExplain(t *testing.T) {
	for _, c := range []struct {
		name       string
		lagS       float64
		unreliable bool
	}{
		{"lag 50 s", 50, true},
		{"lag 40 ms", 0.04, false},
	} {
		a := New(Config{Agents: 1, Rounds: 1, StallAfter: 20 * time.Second})
		for _, e := range []events.Event{
			{TS: 0, Kind: events.RequestSent, Agent: 0, Round: 1, Request: "a0-r1-0"},
			{TS: 0.5, Kind: events.Headers, Agent: 0, Round: 1, Request: "a0-r1-0"},
			{TS: 17, Kind: events.FirstContent, Agent: 0, Round: 1, Request: "a0-r1-0"},
			{TS: 59, Kind: events.Done, Agent: 0, Round: 1, Request: "a0-r1-0", LatencyS: 59, MaxGapS: 42, Chunks: 100, CompletionTokens: 100},
		} {
			a.Event(e)
		}
		var r results.Results
		a.Fill(&r, 60)
		assert.Equal(t, results.StalledStreams, r.Verdict.Kind, c.name)
		lag := results.LagSummary{P50: c.lagS / 2, P99: c.lagS, Max: c.lagS, N: 100}
		r.Speedup = 10
		r.Harness = &results.Harness{Lag: results.LagSummary{N: 100}, SimulatorLag: &lag}
		JudgeLag(r.Harness, r.Speedup, 20*time.Second, r.Latency.E2E.P50)
		a.Doubt(&r)
		if !c.unreliable {
			assert.Empty(t, r.Verdict.Unreliable, c.name)
			assert.False(t, strings.HasPrefix(r.Verdict.Summary, "unreliable"), c.name)
			continue
		}
		assert.Equal(t, "the machine could not keep up with --speedup 10: the simulator lag reached 50 s (simulated), and its longest silence, 42 s, is within 50 s of stall_after 20 s", r.Verdict.Unreliable, c.name)
		assert.Equal(t, results.Healthy, r.Verdict.Kind, "a stall the lag could explain is not blamed on the server")
		assert.True(t, strings.HasPrefix(r.Verdict.Summary, "unreliable: "), r.Verdict.Summary)
		assert.True(t, strings.HasPrefix(r.Verdict.Evidence[0], "verdict unreliable: "), r.Verdict.Evidence[0])
		assert.Contains(t, strings.Join(r.Verdict.Evidence, "\n"), "set aside, as the run's lag could explain it: stalled-streams: 1 stream stalled")
	}
}

// TestDoubtOfSerialization: one stream at a time, read from the samples of a run whose lag is
// longer than its requests, is unreliable; beside a lag of milliseconds it stands.
func TestDoubtOfSerialization(t *testing.T) {
	for _, c := range []struct {
		lagS       float64
		unreliable bool
	}{{187, true}, {0.04, false}} {
		a := New(Config{})
		r := results.Results{Speedup: 10, Verdict: results.Verdict{Kind: results.ServerSerialized, Summary: "30.8 requests in flight on average but the server progresses one at a time (mean e2e latency 53 s)"}}
		r.Latency.E2E.Mean = 53
		r.Harness = &results.Harness{Lag: results.LagSummary{P99: c.lagS, Max: c.lagS, N: 100}}
		JudgeLag(r.Harness, r.Speedup, 20*time.Second, 53)
		a.Doubt(&r)
		assert.Equal(t, c.unreliable, r.Verdict.Unreliable != "", "lag %v s: %q", c.lagS, r.Verdict.Unreliable)
	}
}
