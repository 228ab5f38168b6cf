package diagnose

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// TestContextRefusedAfterAFitToAWiderWindow: fitted to a window wider than the one the
// server names in its refusal, the advice is the server's window; a refusal that counts no
// prompt tokens still does not offer the fitted window again.
func TestContextRefusedAfterAFitToAWiderWindow(t *testing.T) {
	w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke"})
	require.NoError(t, err)
	refusal := func(msg string) *results.Results {
		return &results.Results{Failures: []results.Failure{{Class: "http_status", Status: 400, Count: 2, FirstMessage: msg}}}
	}
	got := contextRefused(refusal("request (1103 tokens) exceeds the available context size (1024 tokens), try increasing it"),
		w, &refusedPrompt{window: 2048, first: 500})
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "although the workload was fitted to a window of 2048 tokens: the server names a window of 1024 tokens — rerun with --fit-context=1024")

	got = contextRefused(refusal("prompt is too long"), w, &refusedPrompt{window: 2048, first: 500})
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "although the workload was fitted to a window of 2048 tokens: the server counts more tokens than the harness planned")
	assert.Contains(t, got[0], "rerun with a smaller --fit-context")
	assert.NotContains(t, got[0], "--fit-context=2048")

	got = contextRefused(refusal("request (1103 tokens) exceeds the available context size (1024 tokens), try increasing it"),
		w, &refusedPrompt{window: 1024, first: 441})
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "the server counted 1103 prompt tokens where the harness estimated 441 (×2.50)")
	assert.Contains(t, got[0], "rerun with --fit-context=409 (the window ÷ 2.50)")
}

// TestLagWarningThresholds checks when the lag warning is given and the speedup it names.
func TestLagWarningThresholds(t *testing.T) {
	const stallAfter = 120 * time.Second // ocbrowse's: the limit is 6 s, or 5 % of the median latency
	small := results.LagSummary{N: 1000, P50: 0.001, P99: 5, Max: 8}
	assert.Empty(t, HarnessLagWarning(small, 1000, stallAfter, 0), "5 s is within 5 %% of 120 s")
	assert.Empty(t, HarnessLagWarning(small, 1000, stallAfter, 170), "5 s is within 5 %% of 120 s and of 170 s")

	large := results.LagSummary{N: 1000, P50: 0.1, P99: 60, Max: 200}
	assert.Equal(t, "harness lag p99 60 s (simulated) exceeds 6.0 s (5 % of stall_after 2m0s): "+
		"the harness, not the server, is setting the pace, so latencies and stall times are inflated; use --speedup 300 or lower",
		HarnessLagWarning(large, 3000, stallAfter, 700))
	assert.Contains(t, HarnessLagWarning(small, 1000, stallAfter, 13.6), "exceeds 0.7 s (5 % of the median end-to-end latency 14 s)",
		"the latency bound applies when it is the tighter one")
	assert.NotContains(t, HarnessLagWarning(large, 1, stallAfter, 0), "--speedup", "at speedup 1 there is nothing to lower")

	few := large
	few.N = lagMinWaits - 1
	assert.Empty(t, HarnessLagWarning(few, 1000, stallAfter, 0), "too few waits to judge")
}

func TestRoundDown(t *testing.T) {
	for x, want := range map[float64]string{0.3: "1", 1: "1", 3.7: "3", 37.5: "30", 2999: "2000", 100: "100"} {
		assert.Equal(t, want, roundDown(x), "roundDown(%v)", x)
	}
}

// TestStreamWarning checks when the stream warning is given and the remedy it names.
func TestStreamWarning(t *testing.T) {
	behind := &results.ServerStream{Chunks: 1000, Tokens: 1000, TokensPerChunk: 1, Behind: 250, StreamInterval: 1, CoalesceTokens: 1}
	coalesced := &results.ServerStream{Chunks: 10, Tokens: 40, TokensPerChunk: 4, Behind: 5, Coalesced: 5, StreamInterval: 2, CoalesceTokens: 2}
	for _, tc := range []struct {
		name    string
		kind    results.ServerKind
		speedup float64
		server  *results.ServerStream
		want    string // a pattern the warning matches; "" for none
	}{
		{"no server count", results.External, 100, nil, ""},
		{"kept up", results.Embedded, 100, &results.ServerStream{Chunks: 1000, Tokens: 1000, StreamInterval: 1, CoalesceTokens: 1}, ""},
		{"behind, not coalesced", results.Embedded, 100, behind, ""},
		{"coalescing asked", results.Embedded, 100, &results.ServerStream{Chunks: 200, Tokens: 1000, Behind: 150, Coalesced: 150, StreamInterval: 1, CoalesceTokens: 8}, ""},
		{"embedded", results.Embedded, 100, coalesced, `^stream chunking: the simulator wrote 5 of its 10 chunks \(50 %\) with more than the profile's stream_interval of 2 tokens, which does not ask for coalescing; the profile asks for 2 tokens per chunk, the harness measured 3\.50 tokens per chunk \(the server 4\.00\); at --speedup 100 the machine cannot keep up with the streams, use a lower --speedup$`},
		{"agentsim serve", results.External, 100, coalesced, `; at --speedup 100 .*, serve the simulator at a lower --speedup$`},
		{"wall speed", results.Embedded, 1, coalesced, `; at wall speed the harness read the streams more slowly than the engine made tokens \(a loaded machine\)$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &results.Results{Server: results.Server{Kind: tc.kind}, Speedup: tc.speedup,
				Stream: results.Stream{TokensPerChunk: 3.5, Server: tc.server}}
			got := streamWarning(r)
			if tc.want == "" {
				assert.Empty(t, got, "streamWarning(%+v)", r.Stream)
				return
			}
			require.Len(t, got, 1, "streamWarning(%+v)", r.Stream)
			assert.Regexp(t, tc.want, got[0])
		})
	}
}

// TestPercent: a share of chunks never reads as 0 when it is not.
func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		part, whole int64
		want        string
	}{{250, 1000, "25 %"}, {1, 100000, "<0.1 %"}, {0, 10, "0 %"}, {3, 1000, "0.3 %"}} {
		assert.Equal(t, tc.want, percent(tc.part, tc.whole), "percent(%d, %d)", tc.part, tc.whole)
	}
}

// TestOnePaceLine: both lags beyond the limit make one line with one recommendation, the
// live line names no speedup of its own (the limit at the end also weighs the latencies), and
// a p99 just above the limit never reads as equal to it ("0.3 s exceeds 0.3 s").
func TestOnePaceLine(t *testing.T) {
	stallAfter := 6 * time.Second
	h := &results.Harness{Lag: results.LagSummary{P99: 2, Max: 3, N: 100}, SimulatorLag: &results.LagSummary{P99: 4, Max: 5, N: 100}}
	JudgeLag(h, 100, stallAfter, 0)
	assert.Equal(t, "harness lag p99 2.0 s and simulator lag p99 4.0 s (simulated) exceed 0.3 s (5 % of stall_after 6s): the machine, not the server, "+
		"is setting the pace, so latencies and stall times are inflated; use --speedup 7 or lower", h.Warning)
	assert.Empty(t, h.SimulatorWarning, "one line, not two")

	assert.Equal(t, "harness lag p99 2.0 s and simulator lag p99 4.0 s (simulated) exceed 0.3 s (5 % of stall_after 6s): the machine, not the server, "+
		"is setting the pace, so latencies and stall times are inflated at --speedup 100; the run's summary names the speedup to use",
		LivePaceWarning(h.Lag, h.SimulatorLag, 100, stallAfter))

	close := results.LagSummary{P99: 0.31, Max: 0.4, N: 100}
	w := HarnessLagWarning(close, 10, stallAfter, 0)
	assert.Contains(t, w, "p99 0.31 s (simulated) exceeds 0.30 s", w)
}

// TestPaceLineAtMax: a --speedup max run's pace warning names no speedup to lower to, since
// the run chose its own; it says the speedup it held did not keep up.
func TestPaceLineAtMax(t *testing.T) {
	h := &results.Harness{Lag: results.LagSummary{P99: 0.01, N: 100}, SimulatorLag: &results.LagSummary{P99: 0.2, Max: 0.3, N: 100}}
	JudgeLagAtMax(h, 23, 6*time.Second, 2.5)
	assert.Empty(t, h.Warning)
	assert.Equal(t, "simulator lag p99 0.2 s (simulated) exceeds 0.1 s (5 % of the median end-to-end latency 2.5 s): the simulator, not the server being modelled, "+
		"is setting the pace, so latencies and stall times are inflated; --speedup max ran at a median of 23× and the machine still did not keep up: "+
		"run it on a less busy machine or with fewer agents", h.SimulatorWarning)
	assert.NotContains(t, h.SimulatorWarning, "or lower")
}
