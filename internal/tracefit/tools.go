package tracefit

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agentsim/agentsim/trace"
	"github.com/agentsim/agentsim/workloads"
)

// toolMessageFraming is the chat framing of one tool message, in tokens, as the simulator
// counts a message.
const toolMessageFraming = 4

// toolData is what the fit keeps of a trace's tool loop, one request at a time.
type toolData struct {
	any     bool                 // some request offered tools or made a call
	defs    []float64            // tools_tokens of the requests that offered tools
	names   map[string]int       // calls per function name
	latency []float64            // tool_s of the replies with one call: one call's latency
	byName  map[string][]float64 // those latencies by the call's function name
	steps   []float64            // tool_s of every reply that has one: a step's tool time
	results []float64            // one call's result tokens, from the next request's new_tokens
	perStep []float64            // the calls of each reply with calls
	tasks   []float64            // the requests of each finished task
	starts  []float64            // new_tokens of the requests that start a task: its user message
}

// toolState is what the fit keeps of a session's tool loop.
type toolState struct {
	prevToolS *float64 // the previous request's tool_s
	prevCalls int      // its tool calls
	task      int      // requests of the open task so far
}

// add counts r, the session's next request; it returns the part of r's after_s that was the
// previous reply's tools (0 when none), so that the think time is what is left.
func (d *toolData) add(r *trace.Request, s *toolState) float64 {
	if r.ToolsTokens > 0 || r.ToolCalls > 0 {
		d.any = true
	}
	if r.ToolsTokens > 0 {
		d.defs = append(d.defs, float64(r.ToolsTokens))
	}
	tool := 0.0
	if s.prevToolS != nil {
		tool = *s.prevToolS
		if r.Extends != nil && *r.Extends == r.Seq-1 {
			per := float64(r.NewTokens)/float64(s.prevCalls) - toolMessageFraming
			d.results = append(d.results, max(1, math.Round(per)))
		}
	} else if r.Extends != nil {
		d.starts = append(d.starts, float64(r.NewTokens))
	}
	if r.ToolCalls > 0 {
		d.perStep = append(d.perStep, float64(r.ToolCalls))
		if d.names == nil {
			d.names = map[string]int{}
		}
		for _, n := range r.ToolNames {
			d.names[n]++
		}
	}
	if r.ToolS != nil {
		d.steps = append(d.steps, *r.ToolS)
		if r.ToolCalls == 1 {
			d.latency = append(d.latency, *r.ToolS)
			if len(r.ToolNames) == 1 {
				if d.byName == nil {
					d.byName = map[string][]float64{}
				}
				d.byName[r.ToolNames[0]] = append(d.byName[r.ToolNames[0]], *r.ToolS)
			}
		}
	}
	s.task++
	if r.ToolS == nil {
		d.tasks = append(d.tasks, float64(s.task))
		s.task = 0
	}
	s.prevToolS, s.prevCalls = r.ToolS, r.ToolCalls
	return tool
}

// fitTools sets the tools and task sections of a trace whose requests offered tools: the set
// (the built-in that has most of the called functions), the calls' latency and result size,
// the steps of a task, the calls of a step and the message that starts a task.
func (res *Result) fitTools(w *workloads.Workload, d *toolData) {
	res.chooseSet(w, d)
	switch {
	case len(d.latency) > 0:
		q := res.quantity("tools.latency", "s", d.latency, func(Fit) bool { return true }, "")
		w.Tools.Latency = durationDist(q.Chosen)
		res.Notes = append(res.Notes, fmt.Sprintf("tools.latency: from the tool_s of the %d replies with one call (of %d with a tool time): a step of several calls lasts as its longest", len(d.latency), len(d.steps)))
	case len(d.steps) > 0:
		q := res.quantity("tools.latency", "s", d.steps, func(Fit) bool { return true }, "")
		w.Tools.Latency = durationDist(q.Chosen)
		res.Notes = append(res.Notes, "tools.latency: from the tool_s of replies with several calls, each the longest of its step: an upper bound on one call")
	default:
		res.Notes = append(res.Notes, "tools.latency: the default; no reply's results came back in the trace (no tool_s)")
	}
	res.fitPerTool(w, d)
	if len(d.results) > 0 {
		q := res.quantity("tools.result_tokens", "tokens", d.results, func(f Fit) bool { return tokenDist(f).Mean() >= 1 }, "a result has at least one token")
		w.Tools.ResultTokens = tokenDist(q.Chosen)
		res.Notes = append(res.Notes, fmt.Sprintf("tools.result_tokens: the new_tokens of each request that carries results, per call, less %d tokens of framing per tool message", toolMessageFraming))
	} else {
		res.Notes = append(res.Notes, "tools.result_tokens: the default; no request carrying results extends the reply that called")
	}
	atLeastOne := func(f Fit) bool { return tokenDist(f).Mean() >= 1 }
	if len(d.tasks) > 0 {
		q := res.quantityOf("task.steps", "calls", d.tasks, countCandidates, atLeastOne, "task.steps needs a mean of at least 1")
		w.Task.Steps = tokenDist(q.Chosen)
	}
	if len(d.perStep) > 0 {
		q := res.quantityOf("task.calls_per_step", "calls", d.perStep, countCandidates, atLeastOne, "task.calls_per_step needs a mean of at least 1")
		w.Task.CallsPerStep = tokenDist(q.Chosen)
	}
	if len(d.starts) > 0 {
		q := res.quantity("task.message_tokens", "tokens", d.starts, func(Fit) bool { return true }, "")
		w.Task.MessageTokens = tokenDist(q.Chosen)
	}
	res.Notes = append(res.Notes, fmt.Sprintf("task: %d tasks finished in the trace, %d replies with tool calls; a task runs from a user message to a reply without tool calls", len(d.tasks), len(d.perStep)))
}

// minPerTool is the fewest single-call steps of one tool that give it a latency of its own.
const minPerTool = 30

// fitPerTool gives each function of the set with at least minPerTool single-call steps its
// own latency (tools.per_tool), when the trace has two such tools or more: a build and a file
// read do not take the same time.
func (res *Result) fitPerTool(w *workloads.Workload, d *toolData) {
	set, _ := workloads.BuiltinToolSet(w.Tools.Set)
	var names []string
	for name, v := range d.byName {
		if len(v) >= minPerTool && set.HasFunction(name) {
			names = append(names, name)
		}
	}
	if len(names) < 2 {
		return
	}
	slices.Sort(names)
	w.Tools.PerTool = map[string]workloads.ToolOverride{}
	for _, name := range names {
		q := res.quantity("tools.per_tool."+strings.ToLower(name)+".latency", "s", d.byName[name], func(Fit) bool { return true }, "")
		l := durationDist(q.Chosen)
		w.Tools.PerTool[strings.ToLower(name)] = workloads.ToolOverride{Latency: &l}
	}
	res.Notes = append(res.Notes, fmt.Sprintf("tools.per_tool: a latency of their own for %s, each with at least %d single-call steps", strings.Join(names, ", "), minPerTool))
}

// chooseSet picks the built-in tool set that has the most of the called functions (ties to
// the one whose definitions are nearest the trace's size).
func (res *Result) chooseSet(w *workloads.Workload, d *toolData) {
	slices.Sort(d.defs)
	size := quantile(d.defs, 0.5)
	best, bestHits, bestGap := "", -1, math.Inf(1)
	for _, name := range workloads.ToolSetNames {
		set, _ := workloads.BuiltinToolSet(name)
		if name == workloads.ToolSetNone {
			continue
		}
		hits := 0
		for fn, n := range d.names {
			if set.HasFunction(fn) {
				hits += n
			}
		}
		gap := math.Abs(float64(len(set.JSON())+3)/4 - size)
		if hits > bestHits || (hits == bestHits && gap < bestGap) {
			best, bestHits, bestGap = name, hits, gap
		}
	}
	set, _ := workloads.BuiltinToolSet(best)
	w.Tools.Set = best
	calls := 0
	for _, n := range d.names {
		calls += n
	}
	res.Notes = append(res.Notes, fmt.Sprintf("tools.set: %s, %d of the %d named calls are of its functions; its definitions are %d tokens, the trace's median %.0f (a file of the harness's own definitions fits better: tools.set PATH)",
		best, bestHits, calls, (len(set.JSON())+3)/4, size))
}
