package tracefit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/trace"
	"github.com/agentsim/agentsim/workloads"
)

// synthetic writes a trace of 40 sessions × 8 requests: uniform output tokens 100–300,
// uniform new tokens 200–600, exponential think time of mean 4 s.
func synthetic(t *testing.T) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, trace.Header{Source: "test", Created: "2026-11-30T00:00:00Z", Requests: 320, Sessions: 40})
	require.NoError(t, err)
	for s := range 40 {
		ts, prompt := float64(s), 2000
		for k := range 8 {
			r := trace.Request{Session: fmt.Sprintf("s%d", s), Seq: k, TS: ts, PromptTokens: prompt,
				OutputTokens: 100 + rng.IntN(201), Status: 200, E2ES: 1}
			if k > 0 {
				e := k - 1
				r.Extends, r.NewTokens = &e, 200+rng.IntN(401)
				r.AfterS = 4 * rng.ExpFloat64()
				r.TS = ts + 1 + r.AfterS
				r.PromptTokens = prompt + r.NewTokens
			}
			require.NoError(t, tw.Write(r))
			ts, prompt = r.TS, r.PromptTokens+r.OutputTokens
		}
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// TestFitRecoversDistributions fits the synthetic trace: each quantity's kind and parameters
// are those it was drawn from, and the workload loads with workloads.Load.
func TestFitRecoversDistributions(t *testing.T) {
	res, err := FromTrace(bytes.NewReader(synthetic(t)), "syn.jsonl", Options{Name: "fit-syn"})
	require.NoError(t, err)
	w := res.Workload
	assert.Equal(t, 40, w.Agents)
	assert.Equal(t, 8, w.Rounds)
	assert.Equal(t, workloads.DistUniform, w.Request.OutputTokens.Kind, "%v", w.Request.OutputTokens)
	assert.InDelta(t, 100, w.Request.OutputTokens.Min, 5)
	assert.InDelta(t, 300, w.Request.OutputTokens.Max, 5)
	assert.True(t, w.Request.ForceOutputLength)
	assert.Equal(t, workloads.DistUniform, w.Context.ReadTokens.Kind, "%v", w.Context.ReadTokens)
	assert.Equal(t, workloads.DistExp, w.ThinkTime.Kind, "%v", w.ThinkTime)
	assert.InDelta(t, 4, w.ThinkTime.Avg.Seconds(), 0.6)

	roundTrips(t, w)

	var table strings.Builder
	require.NoError(t, Render(&table, res))
	assert.Contains(t, table.String(), "request.output_tokens (tokens, n=320): uniform")
	assert.Contains(t, table.String(), "*uniform")
}

// TestKS checks the distance on known cases.
func TestKS(t *testing.T) {
	xs := []float64{1, 2, 3, 4}
	for _, c := range []struct {
		f    Fit
		want float64
	}{
		{Fit{Kind: workloads.DistConst, Value: 2}, 0.5},          // half the data below, half above
		{Fit{Kind: workloads.DistUniform, Min: 1, Max: 4}, 0.25}, // steps of 1/4 against a line
		{Fit{Kind: workloads.DistConst, Value: 100}, 1},          // no data at or above
	} {
		assert.InDelta(t, c.want, ks(xs, c.f), 1e-9, "ks(%v, %+v)", xs, c.f)
	}
}

// toolTrace writes a trace of 30 sessions of a coding agent's tool loop: each task takes
// 1–5 steps, each step but the last calls read or grep (one call, or two), each call's tool
// time is exponential of mean 2 s, each result 300–500 tokens, and a task's message 80 tokens.
func toolTrace(t *testing.T) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, trace.Header{Source: "test", Created: "2026-12-01T00:00:00Z"})
	require.NoError(t, err)
	for s := range 30 {
		ts, prompt, seq := float64(s), 6000, 0
		var prev *trace.Request
		for range 4 {
			steps := 1 + rng.IntN(5)
			for k := range steps {
				r := trace.Request{Session: fmt.Sprintf("s%d", s), Seq: seq, TS: ts, PromptTokens: prompt, OutputTokens: 40 + rng.IntN(40),
					Status: 200, E2ES: 1, ToolsTokens: 5300}
				if prev != nil {
					e := seq - 1
					r.Extends = &e
					if prev.ToolS != nil {
						for range prev.ToolCalls {
							r.NewTokens += 300 + rng.IntN(201) + 4
						}
						r.AfterS = *prev.ToolS
					} else {
						r.NewTokens, r.AfterS = 80, 10
					}
					r.TS = ts + 1 + r.AfterS
					r.PromptTokens = prompt + r.NewTokens
				}
				if k < steps-1 {
					r.ToolCalls = 1 + rng.IntN(2)
					for range r.ToolCalls {
						r.ToolNames = append(r.ToolNames, []string{"read", "grep"}[rng.IntN(2)])
					}
					ts := 2 * rng.ExpFloat64()
					if r.ToolCalls > 1 {
						ts += 2 * rng.ExpFloat64()
					}
					r.ToolS = &ts
				}
				require.NoError(t, tw.Write(r))
				ts, prompt, seq, prev = r.TS, r.PromptTokens+r.OutputTokens, seq+1, &r
			}
		}
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// TestFitTools fits a tool loop: the built-in set with its functions, one call's latency
// from the single-call steps, the result size, the steps of a task and the calls of a step;
// think time is what the tools leave of after_s. The workload loads.
func TestFitTools(t *testing.T) {
	res, err := FromTrace(bytes.NewReader(toolTrace(t)), "tools.jsonl", Options{})
	require.NoError(t, err)
	w := res.Workload
	assert.Equal(t, workloads.ToolSetCoding, w.Tools.Set)
	assert.InDelta(t, 2, w.Tools.Latency.Mean().Seconds(), 0.4, "%v", w.Tools.Latency)
	require.Len(t, w.Tools.PerTool, 2, "read and grep, each called alone often enough")
	for _, name := range []string{"read", "grep"} {
		l := w.Tools.PerTool[name].Latency
		require.NotNil(t, l, name)
		assert.InDelta(t, 2, l.Mean().Seconds(), 0.7, "%s: %v", name, l)
	}
	assert.InDelta(t, 400, w.Tools.ResultTokens.Mean(), 15, "%v", w.Tools.ResultTokens)
	assert.InDelta(t, 3, w.Task.Steps.Mean(), 0.3, "%v", w.Task.Steps)
	assert.Equal(t, workloads.DistMixture, w.Task.CallsPerStep.Kind, "few values: the data's own distribution")
	assert.InDelta(t, 1.5, w.Task.CallsPerStep.Mean(), 0.1, "%v", w.Task.CallsPerStep)
	assert.Equal(t, workloads.Const(80), w.Task.MessageTokens)
	assert.Equal(t, workloads.Const(0), w.Context.ReadTokens, "a tool loop reads through its tools")
	assert.InDelta(t, 6000-5300-11, w.Context.InitialTokens, 1, "the first prompt less the definitions and the framing")
	// Think time: what the tools leave of after_s, 0 after a tool step, 10 s before each of
	// the 3 later tasks of the 30 sessions.
	think := res.Quantities[len(res.Quantities)-1]
	require.Equal(t, "think_time", think.Key)
	tens := 0
	for _, x := range think.Data {
		if x == 10 {
			tens++
		} else {
			assert.InDelta(t, 0, x, 1e-9)
		}
	}
	assert.Equal(t, 30*3, tens)

	roundTrips(t, w)

	var table strings.Builder
	require.NoError(t, Render(&table, res))
	for _, key := range []string{"tools.latency (s, n=", "tools.result_tokens (tokens, n=", "task.steps (calls, n=", "task.calls_per_step (calls, n=", "tools.set: coding",
		"think_time: 244 of 334 gaps are 0 once the tool time is taken out (a proxy sees a tool's time as the whole gap); the other 90, mostly between tasks: p50 10.000 s, p90 10.000 s"} {
		assert.Contains(t, table.String(), key)
	}
}

// TestFitAPI: the fitted workload's request.api is the API most of the trace's requests went
// through, chat when the trace does not say.
func TestFitAPI(t *testing.T) {
	for _, c := range []struct{ apis, want string }{
		{"responses responses chat", workloads.APIResponses},
		{"chat completions responses", workloads.APIChat},
		{"  ", workloads.APIChat},
	} {
		var buf bytes.Buffer
		tw, err := trace.NewWriter(&buf, trace.Header{Source: "test", Created: "2026-12-01T00:00:00Z"})
		require.NoError(t, err)
		for i, api := range strings.Split(c.apis, " ") {
			require.NoError(t, tw.Write(trace.Request{Session: fmt.Sprintf("s%d", i), TS: float64(i), PromptTokens: 100,
				OutputTokens: 10, Status: 200, E2ES: 1, API: api}))
		}
		require.NoError(t, tw.Close())
		res, err := FromTrace(&buf, "t.jsonl", Options{})
		require.NoError(t, err)
		assert.Equal(t, c.want, res.Workload.Request.API, "apis %q", c.apis)
	}
}

// roundTrips checks that the fitted workload w, written as YAML, loads back the same: it runs
// with agentsim run --workload.
func roundTrips(t *testing.T, w *workloads.Workload) {
	t.Helper()
	b, err := w.YAML()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "fit.yaml")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	loaded, err := workloads.Load(workloads.LoadOptions{Workload: path})
	require.NoError(t, err, "the fitted workload runs with agentsim run --workload")
	assert.Equal(t, w, loaded)
}
