package results

import (
	"github.com/agentsim/agentsim/events"
)

// Tools is what the agents' tools did, in a run whose workload offers tools (docs/agentic.md):
// built from the tool_call, tool_result and round_done events.
type Tools struct {
	// Calls counts the tool calls that ended (tool_result); PlannedCalls those of them the
	// agents made themselves, in steps task.steps planned, because the model called none.
	Calls        int `json:"calls"`
	PlannedCalls int `json:"planned_calls"`
	// ModelSteps counts the replies whose tool calls ran; PlannedSteps the steps the agents
	// planned after replies without one.
	ModelSteps   int `json:"model_steps"`
	PlannedSteps int `json:"planned_steps"`
	// PerTool is, per function name, its calls and their latencies in seconds.
	PerTool map[string]ToolStats `json:"per_tool"`
	// Seconds is the time agents spent in tools, simulated seconds: per step, its longest call
	// (the calls of a step run in parallel).
	Seconds float64 `json:"seconds"`
	// StepsPerTask summarises the model calls of each task that ended (a reply without a
	// tool call), its final answer included.
	StepsPerTask Summary `json:"steps_per_task"`
}

// ToolStats is one tool's calls and their latencies.
type ToolStats struct {
	Calls   int     `json:"calls"`
	Seconds Summary `json:"seconds"`
}

// toolsBuilder accumulates Tools from events.
type toolsBuilder struct {
	calls, planned int
	latency        map[string][]float64 // per tool name
	step           map[string]int       // per request, its step's index in steps
	steps          []stepTools          // the steps, in the order they began (sums in a fixed order)
	taskSteps      []float64
}

// stepTools is one step's calls: its longest latency, and whether the agent planned it.
type stepTools struct {
	longest float64
	planned bool
}

// event adds one event.
func (t *toolsBuilder) event(e events.Event) {
	switch {
	case e.Kind == events.ToolResult:
		t.calls++
		if e.Planned {
			t.planned++
		}
		if t.latency == nil {
			t.latency, t.step = map[string][]float64{}, map[string]int{}
		}
		t.latency[e.Tool] = append(t.latency[e.Tool], e.LatencyS)
		i, ok := t.step[e.Request]
		if !ok {
			i, t.step[e.Request] = len(t.steps), len(t.steps)
			t.steps = append(t.steps, stepTools{planned: e.Planned})
		}
		t.steps[i].longest = max(t.steps[i].longest, e.LatencyS)
	case e.Kind == events.RoundDone && e.TaskSteps > 0:
		t.taskSteps = append(t.taskSteps, float64(e.TaskSteps))
	}
}

// fill returns the accumulated Tools, nil when no tool call ended and no task did.
func (t *toolsBuilder) fill() *Tools {
	if t.calls == 0 && len(t.taskSteps) == 0 {
		return nil
	}
	r := &Tools{Calls: t.calls, PlannedCalls: t.planned, PerTool: map[string]ToolStats{},
		StepsPerTask: Summarize(clone(t.taskSteps))}
	for name, lat := range t.latency {
		r.PerTool[name] = ToolStats{Calls: len(lat), Seconds: Summarize(clone(lat))}
	}
	for _, s := range t.steps {
		r.Seconds += s.longest
		if s.planned {
			r.PlannedSteps++
		} else {
			r.ModelSteps++
		}
	}
	return r
}
