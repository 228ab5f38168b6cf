package agents

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/events"
)

// The tool loop of an agent whose workload offers tools (tools.set not none; docs/agentic.md).
// A round stays one model call. A reply with tool calls is followed by the calls, run in
// parallel, the assistant message with its tool_calls and one tool message per call; the next
// round is the task's next step. A reply without one ends the task, and the next round starts
// the next with a user message — unless the model has never called a tool and the task
// planned more steps (task.steps), in which case the agent makes task.calls_per_step calls
// itself and gives their results in one user message.

// task is where an agent is in its current task.
type task struct {
	steps   int  // model calls of the task answered so far
	planned int  // model calls the task takes when the model calls no tool
	model   bool // the model has called a tool: it, not planned, ends tasks from now on
}

// malformedNoticeTokens is the size of the user message an agent sends after a reply whose
// tool calls could not be assembled, telling the model so, in tokens.
const malformedNoticeTokens = 40

// toolRun is one tool call an agent runs: its name, id (none for a planned call), latency
// and result size.
type toolRun struct {
	name, id string
	latency  time.Duration
	tokens   int
}

// withTools reports whether the agent's requests carry tools: the run has a tool set and the
// agent draws its rounds from the workload (a replayed session sends what it recorded).
func (a *Agent) withTools() bool { return a.env.Tools != nil && a.script == nil }

// offerTools sets the tool fields of req: the run's one copy of the definitions. Out of line:
// request's frame stays while the request streams (see Agent.request).
//
//go:noinline
func (a *Agent) offerTools(req *Request) {
	t := &a.env.Workload.Tools
	req.Tools, req.ToolChoice, req.ParallelToolCalls = a.env.Tools.Tools(), t.ToolChoice(), t.Parallel
}

// startTask plans a new task; every task after the first begins with a user message of
// task.message_tokens.
func (a *Agent) startTask(round int) {
	w := a.env.Workload
	a.task.steps, a.task.planned = 0, w.Task.SampleSteps(a.rng)
	if round > 0 {
		a.say(openai.ChatMessageRoleUser, "task", round, w.Task.MessageTokens.Sample(a.rng))
	}
}

// afterReply does what follows a model call's reply in a task: the tools it calls, the
// planned step when the model calls none, or the end of the task. taskSteps is the task's
// model calls when the reply ended it, else 0; false means the run stopped meanwhile.
//
//go:noinline
func (a *Agent) afterReply(rounds context.Context, round int, res *Result) (taskSteps int, ok bool) {
	a.task.steps++
	switch {
	case len(res.ToolCalls) > 0:
		a.task.model = true
		return 0, a.runCalls(rounds, round, res.ToolCalls)
	case !a.task.model && a.task.steps < a.task.planned:
		return 0, a.runPlanned(rounds, round)
	}
	steps := a.task.steps
	a.startTask(round)
	return steps, true
}

// malformed continues the task after a reply whose tool calls could not be assembled: a
// short user message says so, as a harness tells its model.
func (a *Agent) malformed(round int) {
	a.task.steps++
	a.say(openai.ChatMessageRoleUser, "malformed", round, malformedNoticeTokens)
}

// runCalls runs the reply's tool calls and appends one tool message per call.
func (a *Agent) runCalls(rounds context.Context, round int, calls []ToolCall) bool {
	t := &a.env.Workload.Tools
	runs := a.toolRuns[:0]
	for _, c := range calls {
		runs = append(runs, toolRun{name: c.Name, id: c.ID, latency: t.LatencyOf(c.Name).Sample(a.rng),
			tokens: max(1, t.ResultTokensOf(c.Name).Sample(a.rng))})
	}
	a.toolRuns = runs
	if !a.runTools(rounds, round, runs, false) {
		return false
	}
	for i := range runs {
		a.sayTool(round, i, runs[i].tokens, calls[i:i+1])
	}
	return true
}

// runPlanned makes a planned step's calls, each of a function of the set drawn at random,
// and appends their results in one user message.
func (a *Agent) runPlanned(rounds context.Context, round int) bool {
	t, fns := &a.env.Workload.Tools, a.env.Tools.Functions()
	runs, total := a.toolRuns[:0], 0
	for range a.env.Workload.Task.SampleCalls(a.rng) {
		name := ""
		if len(fns) > 0 {
			name = fns[a.rng.IntN(len(fns))]
		}
		r := toolRun{name: name, latency: t.LatencyOf(name).Sample(a.rng), tokens: max(1, t.ResultTokensOf(name).Sample(a.rng))}
		runs, total = append(runs, r), total+r.tokens
	}
	a.toolRuns = runs
	if !a.runTools(rounds, round, runs, true) {
		return false
	}
	a.say(openai.ChatMessageRoleUser, "tools", round, total)
	return true
}

// runTools runs calls in parallel: each starts now and ends after its latency, so the step
// takes the longest; each call's tool_result is recorded when it ends. false means the run
// stopped first.
func (a *Agent) runTools(rounds context.Context, round int, runs []toolRun, planned bool) bool {
	req := requestID(a.ID, round, a.attempts)
	a.set(events.StateTool)
	for i := range runs {
		a.record(&events.Event{Kind: events.ToolCall, Round: round, Request: req, Tool: runs[i].name,
			ToolCallID: runs[i].id, Planned: planned})
	}
	order := a.toolOrder[:0]
	for i := range runs {
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(runs[x].latency, runs[y].latency) })
	a.toolOrder = order
	var elapsed time.Duration
	for _, i := range order {
		r := &runs[i]
		if a.env.Clock.Sleep(rounds, r.latency-elapsed) != nil {
			return false
		}
		elapsed = r.latency
		a.record(&events.Event{Kind: events.ToolResult, Round: round, Request: req, Tool: r.name, ToolCallID: r.id,
			Planned: planned, LatencyS: r.latency.Seconds(), ResultTokens: r.tokens})
	}
	return true
}

// sayTool appends the tool message answering call[0] with tokens tokens of text.
func (a *Agent) sayTool(round, i, tokens int, call []ToolCall) {
	a.say(openai.ChatMessageRoleTool, toolPart(i), round, tokens)
	a.messages[len(a.messages)-1].calls = call
}

// toolParts names the text of a reply's first tool messages (workloads.Text's part).
var toolParts = [...]string{"tool0", "tool1", "tool2", "tool3", "tool4", "tool5", "tool6", "tool7"}

// toolPart names the text of a reply's tool message i.
func toolPart(i int) string {
	if i < len(toolParts) {
		return toolParts[i]
	}
	return "tool" + strconv.Itoa(i)
}

// sayReply appends the reply's assistant message, with its tool calls.
func (a *Agent) sayReply(res *Result) {
	a.messages = append(a.messages, message{role: openai.ChatMessageRoleAssistant, content: res.Content, calls: res.ToolCalls})
	a.words += countWords(res.Content)
	for _, c := range res.ToolCalls {
		a.words += countWords(c.Arguments) + 1
	}
}

// wireCalls is a message's tool calls as go-openai sends them.
func wireCalls(calls []ToolCall) []openai.ToolCall {
	out := make([]openai.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments}}
	}
	return out
}
