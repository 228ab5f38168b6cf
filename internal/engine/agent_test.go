package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
)

// sample draws n values of draw from a seeded source and returns their mean and their 99th
// percentile.
func sample(n int, draw func(*rand.Rand) int) (mean float64, p99 int) {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]int, n)
	sum := 0
	for i := range v {
		v[i] = draw(r)
		sum += v[i]
	}
	slices.Sort(v)
	return float64(sum) / float64(n), v[n*99/100]
}

// TestAgentDefaults: the zero agent section draws TraceLab's figures — 8.8 model calls per user
// request (7.8 tool steps before the answer), median 2, 1.2 tool calls per reply with a p99 of 4.
func TestAgentDefaults(t *testing.T) {
	var a Agent
	steps, _ := sample(200_000, a.ToolSteps)
	assert.InEpsilon(t, DefaultCallsPerRequest, steps+1, 0.02, "model calls per user request")
	q := callQuantiles(200_000, &a)
	assert.Equal(t, 2, q[50], "median model calls per user request (TraceLab: 2)")
	assert.InDelta(t, 21, q[90], 4, "90th percentile (TraceLab: 21)")
	assert.InDelta(t, 87, q[99], 25, "99th percentile (TraceLab: 87)")
	calls, p99 := sample(200_000, a.CallsInReply)
	assert.InEpsilon(t, DefaultCallsPerReply, calls, 0.02, "tool calls per reply")
	assert.Equal(t, DefaultCallsPerReplyP99, p99, "p99 of tool calls per reply")
	assert.Equal(t, ToolCallsOpenAI, a.Style())
}

// TestAgentFits: other means and percentiles land where the profile asks.
func TestAgentFits(t *testing.T) {
	for _, tc := range []struct {
		perRequest, perReply float64
		p99                  int
	}{
		{3, 1.5, 5},
		{20, 2, 8},
		{1.5, 1.05, 2},
	} {
		a := Agent{CallsPerRequest: tc.perRequest, CallsPerReply: tc.perReply, CallsPerReplyP99: tc.p99}
		require.Empty(t, a.problems(), "%+v", a)
		steps, _ := sample(200_000, a.ToolSteps)
		assert.InEpsilon(t, tc.perRequest, steps+1, 0.02, "%+v: model calls per user request", a)
		calls, p99 := sample(200_000, a.CallsInReply)
		assert.InEpsilon(t, tc.perReply, calls, 0.02, "%+v: tool calls per reply", a)
		assert.Equal(t, tc.p99, p99, "%+v: p99 of tool calls per reply", a)
	}
	one := Agent{CallsPerRequest: 1, CallsPerReply: 1, CallsPerReplyP99: 1}
	require.Empty(t, one.problems())
	steps, _ := sample(1000, one.ToolSteps)
	calls, p99 := sample(1000, one.CallsInReply)
	assert.Equal(t, []float64{0, 1}, []float64{steps, calls}, "one call per request answers at once; one call per reply")
	assert.Equal(t, 1, p99)
}

// callQuantiles draws n user requests' model calls (tool steps and the answer) and returns
// their percentiles, indexed by percent.
func callQuantiles(n int, a *Agent) [100]int {
	r := rand.New(rand.NewPCG(7, 8))
	v := make([]int, n)
	for i := range v {
		v[i] = a.ToolSteps(r) + 1
	}
	slices.Sort(v)
	var q [100]int
	for p := range q {
		q[p] = v[n*p/100]
	}
	return q
}

// TestCallsPerRequestMedian: a median below the mean draws a heavy tail through both; a mean
// at or below the default median, or a median of 0 there, is geometric; a median at or above
// the mean is refused by name.
func TestCallsPerRequestMedian(t *testing.T) {
	a := Agent{CallsPerRequest: 20, CallsPerRequestP50: 4}
	require.Empty(t, a.problems())
	steps, _ := sample(200_000, a.ToolSteps)
	assert.InEpsilon(t, 20, steps+1, 0.02, "mean")
	assert.Equal(t, 4, callQuantiles(200_000, &a)[50], "median")

	geo := Agent{CallsPerRequest: 1.5}
	assert.Zero(t, geo.callsPerRequestP50(), "a mean below the default median is geometric")
	q := callQuantiles(200_000, &geo)
	assert.Equal(t, 1, q[50], "geometric of mean 1.5: half the requests answer at once")

	for _, p50 := range []float64{20, 25, 0.5, math.NaN()} {
		bad := Agent{CallsPerRequest: 20, CallsPerRequestP50: p50}
		ps := bad.problems()
		require.Len(t, ps, 1, "median %g", p50)
		assert.Contains(t, ps[0].Error(), "agent.calls_per_request_p50: ")
		assert.Contains(t, ps[0].Error(), "want a median from 1 up to below the mean")
	}
}

// TestAgentAllowAndWeights: Allow names tools exactly; a tool Weights does not name weighs 1.
func TestAgentAllowAndWeights(t *testing.T) {
	a := Agent{Allow: []string{"bash"}, Weights: map[string]float64{"read": 3, "grep": 0}}
	assert.True(t, a.Allows("bash"))
	assert.False(t, a.Allows("Bash"))
	assert.Equal(t, []float64{3, 0, 1}, []float64{a.Weight("read"), a.Weight("grep"), a.Weight("glob")})
}

// TestToolCallTokensFixTheLength: a reply that calls tools is its reasoning plus exactly its
// calls' tokens, capped by max_tokens (finish length) but never lengthened by ignore_eos; a
// reply that fits its cap exactly still stops.
func TestToolCallTokensFixTheLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, err := NewEngine(clock.Real(), DSV4PD(), nil)
		require.NoError(t, err)
		defer e.Stop()
		for _, tc := range []struct {
			job                       Job
			output, reasoning, atMost int // reasoning -1: some, at most atMost
			finish                    string
		}{
			{Job{PromptTokens: 10, ToolCallTokens: 17, Key: 1}, 17, 0, 0, "stop"},
			{Job{PromptTokens: 10, ToolCallTokens: 17, MaxTokens: 17, Key: 2}, 17, 0, 0, "stop"},
			{Job{PromptTokens: 10, ToolCallTokens: 17, MaxTokens: 10, Key: 3}, 10, 0, 0, "length"},
			{Job{PromptTokens: 10, ToolCallTokens: 17, MaxTokens: 100, IgnoreEOS: true, Key: 4}, 17, 0, 0, "stop"},
		} {
			g, err := e.Submit(tc.job)
			require.NoError(t, err)
			assert.Equal(t, []any{tc.output, tc.reasoning, tc.finish}, []any{g.Output, g.Reasoning, g.Finish}, "Submit(%+v)", tc.job)
		}
		// low effort reasons for half of a 400–1200-token reply, then calls.
		g, err := e.Submit(Job{PromptTokens: 10, ToolCallTokens: 17, Effort: "low", Key: 5})
		require.NoError(t, err)
		assert.GreaterOrEqual(t, g.Reasoning, 200)
		assert.LessOrEqual(t, g.Reasoning, 600)
		assert.Equal(t, g.Reasoning+17, g.Output)
		assert.Equal(t, "stop", g.Finish)
	})
}

// TestToolCallStyleFault: the fault names a style for the share of requests it strikes, and
// refuses a style there is not.
func TestToolCallStyleFault(t *testing.T) {
	f, err := ParseFaults([]string{"tool-call-style"}, nil, 1)
	require.NoError(t, err)
	assert.Equal(t, "tool-call-style{style=name-every-chunk fraction=1}", f.String())
	assert.Equal(t, ToolCallsNameEveryChunk, f.plan(f.rngFor(1)).ToolCallStyle)

	f, err = ParseFaults([]string{"tool-call-style"}, []string{"style=no-id", "fraction=0"}, 1)
	require.NoError(t, err)
	assert.Equal(t, ToolCallStyle(""), f.plan(f.rngFor(1)).ToolCallStyle, "fraction 0 strikes none")

	_, err = ParseFaults([]string{"tool-call-style"}, []string{"style=json"}, 1)
	assert.EqualError(t, err, `fault tool-call-style: style: "json" is not allowed: want openai, repeat-ids, name-every-chunk, no-id`)
	assert.Equal(t, uint64(7), must(ParseFaults(nil, nil, 7)).Seed())
	assert.Equal(t, uint64(0), (*Faults)(nil).Seed())
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
