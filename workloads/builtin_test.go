package workloads

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/pacer"
)

func loadBuiltin(t *testing.T, name string) *Workload {
	t.Helper()
	w, err := Load(LoadOptions{Workload: name})
	require.NoError(t, err, "Load(%q)", name)
	return w
}

// TestNames lists the built-ins and checks Builtin for a missing one.
func TestNames(t *testing.T) {
	assert.Equal(t, []string{"coding-agent", "ocbrowse", "smoke", "synthetic"}, Names())
	_, ok := Builtin("nope")
	assert.False(t, ok, `Builtin("nope")`)
	data, ok := Builtin("ocbrowse")
	assert.True(t, ok)
	assert.Contains(t, string(data), "name: ocbrowse")
}

// TestOcbrowse pins the incident harness's numbers.
func TestOcbrowse(t *testing.T) {
	w := loadBuiltin(t, "ocbrowse")
	assert.Equal(t, 30, w.Agents)
	assert.Equal(t, 8, w.Rounds)
	assert.Equal(t, 60*time.Minute, w.Duration)
	assert.Equal(t, 10*time.Second, w.StartJitter)
	assert.Equal(t, Context{SystemTokens: 2000, InitialTokens: 8000,
		ReadTokens: Dist{Kind: DistUniform, Min: 2000, Max: 12000}, MaxContextTokens: 131072}, w.Context)
	assert.Equal(t, Request{API: APIChat, Stream: true, ReasoningEffort: "max", MaxTokens: 32768,
		OutputTokens: Dist{Kind: DistUniform, Min: 3000, Max: 4500}}, w.Request, "no timeouts")
	assert.Equal(t, 0, w.Retry.Max)
	assert.Equal(t, DurationDist{Kind: DistUniform, Min: 200 * time.Millisecond, Max: 2 * time.Second}, w.ToolTime)
	assert.Equal(t, DurationDist{Kind: DistExp, Avg: 2 * time.Second}, w.ThinkTime)
	assert.Equal(t, pacer.Config{Kind: "slots", Slots: 30}, w.Pacer)
}

// TestOcbrowseReadsThroughTools checks that ocbrowse reads its pages through the browse
// tools with the read step's figures: each tool call takes tool_time and returns
// context.read_tokens, one call a step, one task of all its rounds, and a task ended early by
// the model is followed by a message of a page's size.
func TestOcbrowseReadsThroughTools(t *testing.T) {
	w := loadBuiltin(t, "ocbrowse")
	assert.Equal(t, ToolSetBrowse, w.Tools.Set)
	assert.False(t, w.Tools.Parallel, "one page a step")
	set, err := w.Tools.Definitions()
	require.NoError(t, err)
	for _, name := range set.Functions() {
		assert.Equal(t, w.ToolTime, w.Tools.LatencyOf(name), "%s: latency", name)
		assert.Equal(t, w.Context.ReadTokens, w.Tools.ResultTokensOf(name), "%s: result tokens", name)
	}
	assert.Equal(t, Const(1), w.Task.CallsPerStep)
	assert.Equal(t, Const(w.Rounds), w.Task.Steps, "one task")
	assert.Equal(t, w.Context.ReadTokens, w.Task.MessageTokens)

	// Without tools it is the original harness.
	none, err := Load(LoadOptions{Workload: "ocbrowse", Overrides: []Override{{Key: "tools.set", Value: "none"}}})
	require.NoError(t, err)
	assert.False(t, none.Tools.Enabled())
}

// TestOcbrowsePasses32kInRound2Or3 checks, by arithmetic and by sampling, that ocbrowse
// contexts reach the long-context wedge threshold (32768 tokens) in round 2 or 3, counting the
// tokens a sequence holds at the end of its round: prompt + that round's output.
func TestOcbrowsePasses32kInRound2Or3(t *testing.T) {
	const threshold = 32768
	w := loadBuiltin(t, "ocbrowse")
	// Means: prompt 17000, 27750, 38500 in rounds 1–3; with the round's output 20750,
	// 31500, 42250.
	assert.InDelta(t, 17000, expectedPromptTokens(w, 1), 0.5)
	assert.InDelta(t, 27750, expectedPromptTokens(w, 2), 0.5)
	assert.InDelta(t, 38500, expectedPromptTokens(w, 3), 0.5)
	first := 0
	for r := 1; r <= w.Rounds && first == 0; r++ {
		if expectedPromptTokens(w, r) >= threshold {
			first = r
		}
	}
	assert.Equal(t, 3, first, "round whose mean prompt first passes 32k")

	// Sampled: the share of agents past the threshold by the end of each round.
	const agents = 20_000
	r := rand.New(rand.NewPCG(1, 1))
	passed := [4]int{}
	for range agents {
		ctx := w.Context.SystemTokens + w.Context.InitialTokens
		for round := 1; round <= 3; round++ {
			ctx += w.Context.ReadTokens.Sample(r) + w.Request.OutputTokens.Sample(r)
			if ctx >= threshold {
				passed[round]++
				break
			}
		}
	}
	byRound2 := float64(passed[1]+passed[2]) / agents
	byRound3 := float64(passed[1]+passed[2]+passed[3]) / agents
	assert.Zero(t, passed[1], "no context passes 32k in round 1 (at most 28500 tokens)")
	assert.Greater(t, byRound2, 0.25, "share past 32k by the end of round 2")
	assert.Greater(t, byRound3, 0.95, "share past 32k by the end of round 3")
}

// TestSynthetic pins the decisive batching test's numbers: 16 × 128 forced tokens, short
// prompt, no reasoning, no pacer.
func TestSynthetic(t *testing.T) {
	w := loadBuiltin(t, "synthetic")
	assert.Equal(t, 16, w.Agents)
	assert.Equal(t, 1, w.Rounds)
	assert.Equal(t, Const(128), w.Request.OutputTokens)
	assert.Equal(t, 128, w.Request.MaxTokens)
	assert.True(t, w.Request.ForceOutputLength)
	assert.Equal(t, "none", w.Request.ReasoningEffort)
	assert.InDelta(t, 200, expectedPromptTokens(w, 1), 0.5)
	assert.Equal(t, pacer.KindUnlimited, w.Pacer.Kind)
}

// TestSmokeIsFast checks by arithmetic that smoke ends within seconds of wall time at
// --speedup 20 against a server doing 10 tok/s per stream (the slow end of 10–30), and that
// its contexts stay around 1–2k tokens.
func TestSmokeIsFast(t *testing.T) {
	const speedup, tokPerSec = 20, 10.0
	w := loadBuiltin(t, "smoke")
	assert.Equal(t, 4, w.Agents)
	assert.Equal(t, 2, w.Rounds)
	// Worst case per round: longest tool time, longest output, three times the mean think.
	round := w.ToolTime.Max + time.Duration(float64(w.Request.OutputTokens.Max)/tokPerSec*float64(time.Second)) +
		3*w.ThinkTime.Mean()
	total := w.StartJitter + time.Duration(w.Rounds)*round
	assert.Less(t, total/speedup, 3*time.Second, "wall time at --speedup %d: %v simulated", speedup, total)
	assert.Less(t, round, w.Watchdog.StallAfter, "a healthy round ends before the watchdog's stall warning")
	for r := 1; r <= w.Rounds; r++ {
		p := expectedPromptTokens(w, r)
		assert.True(t, p >= 1000 && p <= 2000, "round %d mean prompt %.0f tokens; want 1000–2000", r, p)
	}
}

// expectedPromptTokens is the mean prompt size of the given round (1-based), in tokens, if
// the whole of each response is appended to the context: system + initial + round × mean
// read + (round − 1) × mean output. The agents append content only, so this is an upper bound
// when part of the output is reasoning.
func expectedPromptTokens(w *Workload, round int) float64 {
	if round < 1 {
		return 0
	}
	return float64(w.Context.SystemTokens+w.Context.InitialTokens) +
		float64(round)*w.Context.ReadTokens.Mean() +
		float64(round-1)*w.Request.OutputTokens.Mean()
}
