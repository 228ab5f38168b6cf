package harness

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
)

// codingAgent is a small coding-agent run: its contexts cut down so that it runs in a
// moment, its tools each of a fixed latency.
func codingAgent(over map[string]string) simCase {
	o := map[string]string{"agents": "3", "rounds": "8", "context.initial_tokens": "2000",
		"tools.latency": "1s", "think_time": "0s"}
	for k, v := range over {
		o[k] = v
	}
	return simCase{workload: "coding-agent", overrides: o, speedup: 100}
}

// runEvents runs c in a bubble and returns its events.
func runEvents(t *testing.T, c simCase) []events.Event {
	t.Helper()
	var evs []events.Event
	synctest.Test(t, func(t *testing.T) {
		_, dir := runSim(t, t.Context(), c)
		var err error
		evs, err = events.ReadFile[events.Event](filepath.Join(dir, "events.jsonl"))
		require.NoError(t, err)
	})
	return evs
}

// kinds counts events by kind.
func kinds(evs []events.Event) map[events.Kind]int {
	n := map[events.Kind]int{}
	for _, e := range evs {
		n[e.Kind]++
	}
	return n
}

// TestCodingAgentCallsTools: a coding-agent run sends the tool definitions with every request
// (its prompts are the definitions' tokens larger than without tools), the simulated model
// calls them, each call runs for its latency and is answered with a tool message the
// simulator accepts: every request of several steps succeeds.
func TestCodingAgentCallsTools(t *testing.T) {
	evs := runEvents(t, codingAgent(nil))
	n := kinds(evs)
	assert.Equal(t, 24, n[events.Done], "every request succeeds (no 400 for the conversations sent)")
	assert.Zero(t, n[events.Error])
	assert.Positive(t, n[events.ToolCall])
	assert.Equal(t, n[events.ToolCall], n[events.ToolResult])
	model := 0
	for _, e := range evs {
		if e.Kind == events.ToolResult {
			assert.Equal(t, 1.0, e.LatencyS, "%+v", e)
			assert.Positive(t, e.ResultTokens, "%+v", e)
			// A first answer without a tool call is followed by a planned step, until the
			// model has called one.
			assert.Equal(t, e.Planned, e.ToolCallID == "", "%+v", e)
			if !e.Planned {
				model++
			}
		}
	}
	assert.Positive(t, model, "the model called no tool")
	without := runEvents(t, codingAgent(map[string]string{"tools.set": "none", "rounds": "1", "agents": "1", "context.read_tokens": "0"}))
	with := runEvents(t, codingAgent(map[string]string{"rounds": "1", "agents": "1"}))
	first := func(evs []events.Event) int {
		for _, e := range evs {
			if e.Kind == events.Done && e.Agent == 0 {
				return e.PromptTokens
			}
		}
		t.Fatal("no request of agent 0 succeeded")
		return 0
	}
	// The coding set is 5,539 tokens as the simulator counts them (docs/agentic.md §3); one agent, so that no earlier reply has moved the words-per-token estimate.
	assert.InDelta(t, 5539, first(with)-first(without), 50, "prompt tokens with tools %d, without %d", first(with), first(without))
}

// TestParallelToolCallsRunConcurrently: the calls of one reply run at once, each ending after
// its own latency, and the next step is sent when the longest has ended.
func TestParallelToolCallsRunConcurrently(t *testing.T) {
	c := codingAgent(map[string]string{"agents": "2", "rounds": "10",
		"tools.per_tool.read.latency": "2s", "tools.per_tool.grep.latency": "5s", "tools.per_tool.glob.latency": "3s"})
	c.profile = func(p *simserver.Profile) { p.Agent.CallsPerReply, p.Agent.CallsPerReplyP99 = 3, 12 }
	evs := runEvents(t, c)
	type step struct {
		start, end, longest float64
		calls               int
	}
	steps := map[string]*step{}
	var order []string
	next := map[string]float64{} // a step's request → when the agent's next request was sent
	last := map[int]string{}
	for _, e := range evs {
		switch e.Kind {
		case events.ToolCall:
			s := steps[e.Request]
			if s == nil {
				s = &step{start: e.TS}
				steps[e.Request], order = s, append(order, e.Request)
			}
			s.calls++
			last[e.Agent] = e.Request
		case events.ToolResult:
			s := steps[e.Request]
			assert.InDelta(t, s.start+e.LatencyS, e.TS, 1e-3, "%s ends %.3f s after its calls start; its latency is %.3f s", e.ToolCallID, e.TS-s.start, e.LatencyS)
			s.longest, s.end = max(s.longest, e.LatencyS), e.TS
		case events.RequestSent:
			if r, ok := last[e.Agent]; ok {
				next[r] = e.TS
				delete(last, e.Agent)
			}
		}
	}
	parallel := 0
	for _, r := range order {
		s := steps[r]
		if s.calls < 2 {
			continue
		}
		parallel++
		assert.InDelta(t, s.longest, s.end-s.start, 1e-3, "step %s: %d calls took %.3f s; the longest %.3f s", r, s.calls, s.end-s.start, s.longest)
		if at, ok := next[r]; ok {
			assert.InDelta(t, s.start+s.longest, at, 0.5, "step %s: next request %.3f s after its calls start", r, at-s.start)
		}
	}
	assert.Positive(t, parallel, "no reply called several tools")
}

// TestPlannedStepsWithoutModelCalls: a model that never calls a tool (tool_choice none) does
// not end the task at its first answer: the agent makes the planned calls itself, in a user
// message, for as many steps as task.steps planned.
func TestPlannedStepsWithoutModelCalls(t *testing.T) {
	evs := runEvents(t, codingAgent(map[string]string{"agents": "1", "rounds": "6", "tools.choice": "none",
		"task.steps": "3", "task.calls_per_step": "2"}))
	n := kinds(evs)
	assert.Equal(t, 6, n[events.Done])
	assert.Equal(t, 8, n[events.ToolCall], "two tasks of three steps, two planned calls after each but the last")
	var tasks []int
	for _, e := range evs {
		if e.Kind == events.ToolCall {
			assert.True(t, e.Planned, "%+v", e)
		}
		if e.Kind == events.RoundDone && e.TaskSteps > 0 {
			tasks = append(tasks, e.TaskSteps)
		}
	}
	assert.Equal(t, []int{3, 3}, tasks)
}

// TestMalformedToolCallIsClassified: tool calls streamed without ids cannot be answered; the
// reply is classified malformed_tool_call and the agent goes on with its task.
func TestMalformedToolCallIsClassified(t *testing.T) {
	c := codingAgent(map[string]string{"agents": "2", "rounds": "4"})
	c.faults, c.faultParams = []string{"tool-call-style"}, []string{"style=no-id"}
	evs := runEvents(t, c)
	malformed, rounds := 0, 0
	for _, e := range evs {
		switch {
		case e.Kind == events.Error && e.Class == events.ClassMalformedToolCall:
			malformed++
			assert.Contains(t, e.Message, "no id")
		case e.Kind == events.Error:
			t.Errorf("unexpected error: %+v", e)
		case e.Kind == events.RoundDone:
			rounds++
		}
	}
	assert.Positive(t, malformed)
	assert.Equal(t, 8, rounds, "every round of both agents ran")
}

// TestHoldAcrossTools: a permit is released when the reply ends, before its tools run, unless
// pacer.hold_across_tools keeps it across them.
func TestHoldAcrossTools(t *testing.T) {
	for _, hold := range []bool{false, true} {
		t.Run(fmt.Sprintf("hold=%t", hold), func(t *testing.T) {
			var evs []events.Event
			var samples []events.Sample
			synctest.Test(t, func(t *testing.T) {
				_, dir := runSim(t, t.Context(), codingAgent(map[string]string{"pacer.kind": "slots", "pacer.slots": "2",
					"pacer.hold_across_tools": strconv.FormatBool(hold)}))
				var err error
				evs, err = events.ReadFile[events.Event](filepath.Join(dir, "events.jsonl"))
				require.NoError(t, err)
				samples, err = events.ReadFile[events.Sample](filepath.Join(dir, "samples.jsonl"))
				require.NoError(t, err)
			})
			// The pacer's own count: with hold, every agent running tools holds a permit.
			inTools := 0
			for _, s := range samples {
				if n := s.Agents[events.StateTool]; n > 0 && s.Pacer != nil {
					inTools++
					if hold {
						assert.GreaterOrEqual(t, s.Pacer.InUse, n, "sample at %.1f s: %d agents in tools, %d permits in use", s.TS, n, s.Pacer.InUse)
					}
				}
			}
			assert.Positive(t, inTools, "no sample saw an agent in tools")
			type round struct{ release, firstCall, lastResult float64 }
			rounds := map[[2]int]*round{}
			get := func(e events.Event) *round {
				k := [2]int{e.Agent, e.Round}
				if rounds[k] == nil {
					rounds[k] = &round{firstCall: -1}
				}
				return rounds[k]
			}
			for _, e := range evs {
				switch e.Kind {
				case events.Release:
					get(e).release = e.TS
				case events.ToolCall:
					if r := get(e); r.firstCall < 0 {
						r.firstCall = e.TS
					}
				case events.ToolResult:
					get(e).lastResult = e.TS
				}
			}
			withTools := 0
			for k, r := range rounds {
				if r.firstCall < 0 {
					continue
				}
				withTools++
				if hold {
					assert.GreaterOrEqual(t, r.release, r.lastResult, "agent %d round %d: released at %.3f before its tools ended at %.3f", k[0], k[1], r.release, r.lastResult)
				} else {
					assert.LessOrEqual(t, r.release, r.firstCall, "agent %d round %d: released at %.3f after its tools started at %.3f", k[0], k[1], r.release, r.firstCall)
				}
			}
			assert.Positive(t, withTools)
		})
	}
}

// TestHoldAcrossToolsStarves: ocbrowse through its tools behind 16 slots and the wedge, the
// agents keeping their permits while their tools run: the agents starve in the pacer.
func TestHoldAcrossToolsStarves(t *testing.T) {
	if raceDetector() {
		t.Skip("ocbrowse-sized: an ocbrowse-sized run takes 10–30 s under the race detector; run without -race")
	}
	synctest.Test(t, func(t *testing.T) {
		res, _ := runSim(t, t.Context(), simCase{workload: "ocbrowse", speedup: 100,
			overrides: map[string]string{"pacer.slots": "16", "pacer.hold_across_tools": "true"},
			faults:    []string{"long-context-wedge"}})
		assert.Equal(t, results.PacerStarvation, res.Verdict.Kind, "%s: %s", res.Verdict.Kind, res.Verdict.Summary)
	})
}

// TestOcbrowseWedgeThroughTools: ocbrowse reading through its tools, wedged with its own 30
// slots, is the deadlock it is with its original read step.
func TestOcbrowseWedgeThroughTools(t *testing.T) {
	if raceDetector() {
		t.Skip("ocbrowse-sized: an ocbrowse-sized run takes 10–30 s under the race detector; run without -race")
	}
	for _, set := range []string{"browse", "none"} {
		t.Run(set, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				res, _ := runSim(t, t.Context(), simCase{workload: "ocbrowse", speedup: 100,
					overrides: map[string]string{"tools.set": set}, faults: []string{"long-context-wedge"}})
				assert.Equal(t, results.Deadlock, res.Verdict.Kind, "%s: %s", res.Verdict.Kind, res.Verdict.Summary)
			})
		})
	}
}

// TestResultsCountTools: results.json's tools section counts the calls, steps and tool time
// the events show, per tool and per task.
func TestResultsCountTools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, dir := runSim(t, t.Context(), codingAgent(map[string]string{"tools.per_tool.read.latency": "3s"}))
		evs, err := events.ReadFile[events.Event](filepath.Join(dir, "events.jsonl"))
		require.NoError(t, err)
		require.NotNil(t, res.Tools)
		calls, steps := map[string]int{}, map[string]float64{}
		for _, e := range evs {
			if e.Kind == events.ToolResult {
				calls[e.Tool]++
				steps[e.Request] = max(steps[e.Request], e.LatencyS)
			}
		}
		total, seconds := 0, 0.0
		for name, n := range calls {
			total += n
			assert.Equal(t, n, res.Tools.PerTool[name].Calls, "calls of %s", name)
		}
		for _, s := range steps {
			seconds += s
		}
		assert.Equal(t, total, res.Tools.Calls)
		assert.InDelta(t, seconds, res.Tools.Seconds, 1e-9)
		assert.Equal(t, len(steps), res.Tools.ModelSteps+res.Tools.PlannedSteps)
		if r, ok := res.Tools.PerTool["read"]; ok {
			assert.Equal(t, 3.0, r.Seconds.P99)
		}
	})
}

// TestResultsCountPlannedSteps: without model tool calls the planned steps are counted as such.
func TestResultsCountPlannedSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, _ := runSim(t, t.Context(), codingAgent(map[string]string{"agents": "1", "rounds": "6", "tools.choice": "none",
			"task.steps": "3", "task.calls_per_step": "2"}))
		require.NotNil(t, res.Tools)
		assert.Equal(t, 8, res.Tools.Calls)
		assert.Equal(t, 8, res.Tools.PlannedCalls)
		assert.Equal(t, 4, res.Tools.PlannedSteps)
		assert.Zero(t, res.Tools.ModelSteps)
		assert.Equal(t, 2, res.Tools.StepsPerTask.N)
		assert.Equal(t, 3.0, res.Tools.StepsPerTask.Mean)
		assert.InDelta(t, 4.0, res.Tools.Seconds, 1e-9, "four steps of 1 s calls")
	})
}

// TestCodingAgentFitsTheDefaultProfile: the built-in coding-agent's largest request, its
// longest prompt and its max_tokens, fits the context window of the simulator's default
// profile, so a run of it is never told that the server will refuse it.
func TestCodingAgentFitsTheDefaultProfile(t *testing.T) {
	w := loadWith(t, "coding-agent")
	need := diagnose.NeedOf(w)
	assert.LessOrEqual(t, need.Total(), simserver.DSV4PD().MaxContextTokens, "%d-token prompts (%s) + max_tokens %d", need.Prompt, need.How, need.MaxTokens)
	assert.Empty(t, contextWarning(w, simserver.DSV4PD().MaxContextTokens, "max_model_len"))
}
