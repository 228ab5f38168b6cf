package agents

import (
	"context"
	"strconv"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/workloads"
)

// The tool structure of a replayed session (Turn.Tools, ToolCalls, ToolTime): the recorded
// definitions on every request, the assistant message with the reply's tool calls, and one
// tool message per call, sized so that the next prompt has its recorded length.

// toolTokens is what turn t's tool definitions take in its prompt, as estimated; 0 without.
func (a *Agent) toolTokens(t Turn) int {
	if t.Tools == nil {
		return 0
	}
	return a.env.Calibration.ToolTokens(t.Tools)
}

// textTokens is the part of turn t's recorded prompt its messages take: the rest is its tool
// definitions'.
func (a *Agent) textTokens(t Turn) int { return t.PromptTokens - a.toolTokens(t) }

// scriptCalls is what turn k's reply called: the live reply's calls when it made any, else
// the recorded number of calls of the agent's own, named as recorded (or after the set's
// functions) with ids made up.
func (a *Agent) scriptCalls(k int, live []ToolCall) []ToolCall {
	if len(live) > 0 {
		return live
	}
	t := a.script.Turns[k]
	calls := make([]ToolCall, t.ToolCalls)
	for i := range calls {
		name := "tool"
		switch {
		case i < len(t.ToolNames):
			name = t.ToolNames[i]
		case t.Tools != nil && len(t.Tools.Functions()) > 0:
			fns := t.Tools.Functions()
			name = fns[i%len(fns)]
		}
		calls[i] = ToolCall{ID: "call_replay_" + strconv.Itoa(k) + "_" + strconv.Itoa(i), Name: name, Arguments: "{}"}
	}
	return calls
}

// scriptTools runs a replayed reply's calls for their recorded tool time d, all in parallel:
// the agent's state is tool, and each call has its tool_call and tool_result events. false
// means the run stopped first.
func (a *Agent) scriptTools(rounds context.Context, round int, calls []ToolCall, d time.Duration) bool {
	req := requestID(a.ID, round, a.attempts)
	a.set(events.StateTool)
	for _, c := range calls {
		a.record(&events.Event{Kind: events.ToolCall, Round: round, Request: req, Tool: c.Name, ToolCallID: c.ID})
	}
	if a.env.Clock.Sleep(rounds, d) != nil {
		return false
	}
	for _, c := range calls {
		a.record(&events.Event{Kind: events.ToolResult, Round: round, Request: req, Tool: c.Name, ToolCallID: c.ID, LatencyS: d.Seconds()})
	}
	a.set(events.StateThinking)
	return true
}

// growReply returns c with the reply's assistant message: its text and its tool calls.
func growReply(c convo, content string, calls []ToolCall) convo {
	c = grow(c, openai.ChatMessageRoleAssistant, content, countWords(content))
	if len(calls) > 0 {
		c.msgs[len(c.msgs)-1].ToolCalls = wireCalls(calls)
		for _, k := range calls {
			c.words += countWords(k.Arguments) + 1
		}
	}
	return c
}

// toolResults returns base with one tool message per call, answering it by id: together the
// new text up to turn t's recorded prompt, split evenly, each message at least a word.
func (a *Agent) toolResults(base convo, t Turn, calls []ToolCall, part string) convo {
	n := len(calls)
	words := max(n, a.wordsFor(a.textTokens(t), base.words, len(base.msgs)+n))
	for i, k := range calls {
		w := words / n
		if i < words%n {
			w++
		}
		base = grow(base, openai.ChatMessageRoleTool, workloads.Text(a.env.Workload.Seed, a.ID, t.Extends+1, part+"-"+toolPart(i), w), w)
		base.msgs[len(base.msgs)-1].ToolCallID = k.ID
	}
	return base
}
