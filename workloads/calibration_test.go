package workloads

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// session is what one agent's model calls of a workload with tools would send to a server with
// an unbounded prefix cache, by the workload's own distributions: per call the prompt, the
// prefix it shares with the call before (0 for the first), the output, and, but for the first
// call, what the call before appended (its output and its tool results, or the next task's
// user message).
type session struct {
	prompts, prefixes, appends, outputs []int
	calls                               []int // tool calls after each call but a task's last
}

// simulate runs one agent's rounds: each call's output, then the task's next step (its tool
// calls' results) or, after a task's last call, the next task's message. defs is the size of
// the tool definitions, in tokens. An agent stops, as the agents do, before a call whose
// prompt and output would pass max_context_tokens.
func simulate(w *Workload, defs int, r *rand.Rand) session {
	var s session
	prompt := w.Context.SystemTokens + defs + w.Context.InitialTokens
	prefix, left := 0, w.Task.SampleSteps(r)
	for range w.Rounds {
		out := w.Request.Reserved(w.Request.OutputTokens.Sample(r))
		if prompt+out > w.Context.MaxContextTokens {
			break
		}
		s.prompts, s.prefixes, s.outputs = append(s.prompts, prompt), append(s.prefixes, prefix), append(s.outputs, out)
		if prefix > 0 {
			s.appends = append(s.appends, prompt-prefix)
		}
		appended := out
		if left--; left == 0 {
			appended += w.Task.MessageTokens.Sample(r)
			left = w.Task.SampleSteps(r)
		} else {
			n := w.Task.SampleCalls(r)
			s.calls = append(s.calls, n)
			for range n {
				appended += w.Tools.ResultTokens.Sample(r)
			}
		}
		prefix, prompt = prompt, prompt+appended
	}
	return s
}

// simTokens counts tokens as agentsim's simulated server does (simserver/tokens.go): each
// run of non-space bytes is ⌈length / 4⌉ tokens.
func simTokens(text []byte) int {
	n, run := 0, 0
	for _, b := range append(text, ' ') {
		if b == ' ' || b >= '\t' && b <= '\r' {
			n += (run + 3) / 4
			run = 0
			continue
		}
		run++
	}
	return n
}

// median returns the median of xs.
func median(xs []int) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return float64(s[len(s)/2])
}

// TestCodingAgentCalibration computes, from coding-agent's own distributions, the figures it
// was calibrated to and checks that each lands near TraceLab's (docs/agentic.md): the median
// prefix a call shares with the one before (119k tokens), the median append per call (875),
// the median output (214), the token-weighted prefix hit (95.7 %), tool calls per step (1.2,
// p99 4) and model calls per task (8.8).
func TestCodingAgentCalibration(t *testing.T) {
	w := loadBuiltin(t, "coding-agent")
	set, err := w.Tools.Definitions()
	require.NoError(t, err)
	defs := simTokens(set.JSON())
	r := rand.New(rand.NewPCG(119, 875))
	var all session
	hit, sent := 0, 0
	const agents = 4000
	for range agents {
		s := simulate(w, defs, r)
		for i := range s.prompts {
			hit, sent = hit+s.prefixes[i], sent+s.prompts[i]
		}
		all.prefixes = append(all.prefixes, s.prefixes[1:]...)
		all.appends = append(all.appends, s.appends...)
		all.outputs = append(all.outputs, s.outputs...)
		all.calls = append(all.calls, s.calls...)
	}
	callsMean, callsP99 := meanAndP99(all.calls)
	steps := make([]int, 100_000)
	for i := range steps {
		steps[i] = w.Task.SampleSteps(r)
	}
	stepsMean, _ := meanAndP99(steps)
	t.Logf("tool definitions %d tokens (%d characters); per call: median prefix %.0f, median append %.0f, median output %.0f, "+
		"prefix hit %.2f %%; tool calls per step %.2f (p99 %d); model calls per task %.2f; calls per agent %.1f of %d",
		defs, len(set.JSON()), median(all.prefixes), median(all.appends), median(all.outputs), 100*float64(hit)/float64(sent),
		callsMean, callsP99, stepsMean, float64(len(all.outputs))/agents, w.Rounds)
	assert.InEpsilon(t, 119_000, median(all.prefixes), 0.05, "median prefix, tokens")
	assert.InEpsilon(t, 875, median(all.appends), 0.1, "median append per call, tokens")
	assert.InEpsilon(t, 214, median(all.outputs), 0.05, "median output, tokens")
	assert.InDelta(t, 0.957, float64(hit)/float64(sent), 0.005, "token-weighted prefix hit")
	assert.InDelta(t, 1.2, callsMean, 0.05, "tool calls per step")
	assert.Equal(t, 4, callsP99, "p99 tool calls per step")
	assert.InDelta(t, 8.8, stepsMean, 0.3, "model calls per task")
	assert.Greater(t, float64(len(all.outputs))/agents, 0.95*float64(w.Rounds), "agents make their rounds before the context fills")
}

// meanAndP99 returns the mean and the 99th percentile of xs.
func meanAndP99(xs []int) (float64, int) {
	s := slices.Clone(xs)
	slices.Sort(s)
	sum := 0
	for _, x := range s {
		sum += x
	}
	return float64(sum) / float64(len(s)), s[len(s)*99/100]
}

// TestDefaultResultTokens checks that the default result size gives, with coding-agent's
// output, a tool-calling step's append a median near TraceLab's 875 tokens.
func TestDefaultResultTokens(t *testing.T) {
	w := loadBuiltin(t, "coding-agent")
	assert.Equal(t, DefaultResultTokens(), w.Tools.ResultTokens, "coding-agent takes the default")
	assert.Equal(t, DefaultToolLatency(), w.Tools.Latency, "coding-agent takes the default")
	assert.Equal(t, Task{Steps: DefaultTaskSteps(), CallsPerStep: DefaultCallsPerStep(), MessageTokens: Const(DefaultMessageTokens)}, w.Task,
		"coding-agent takes the defaults")
}
