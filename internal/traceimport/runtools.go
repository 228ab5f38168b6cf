package traceimport

import (
	"fmt"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/trace"
	"github.com/agentsim/agentsim/workloads"
)

// runTool is one tool call of a request's reply, as the run's events tell it.
type runTool struct {
	id, name string
	resultS  float64 // when its result was ready, seconds since the run's start
	done     bool    // its tool_result was seen
}

// toolEvent hands a tool_call or tool_result event (kind; request, the request whose reply
// made the call; the call's id and tool name; tS, the event's time) to the request it belongs
// to. Calls an agent makes itself after a reply without tool calls (planned) are not the
// reply's: they stay out of the trace's tool fields, and their time stays in the next
// request's after_s.
func toolEvent(byID map[string]*runRequest, kind events.Kind, request, id, name string, tS float64, planned bool) {
	r := byID[request]
	if r == nil || planned {
		return
	}
	switch kind {
	case events.ToolCall:
		r.tools = append(r.tools, runTool{id: id, name: name})
	case events.ToolResult:
		for i := range r.tools {
			if t := &r.tools[i]; t.id == id && !t.done {
				t.resultS, t.done = tS, true
				return
			}
		}
	}
}

// fillTools sets tr's tool fields: the definitions' size (toolsTokens, the same for every
// request of the run), the reply's calls and their names, and the tool time, from the
// request's end to its last call's result, when every call has its result (a run stopped
// mid-tool has none).
func (r *runRequest) fillTools(tr *trace.Request, toolsTokens int) {
	tr.ToolsTokens = toolsTokens
	if len(r.tools) == 0 || r.end == nil {
		return
	}
	tr.ToolCalls = len(r.tools)
	tr.ToolNames = make([]string, len(r.tools))
	last, all := r.end.TS, true
	for i, t := range r.tools {
		tr.ToolNames[i] = t.name
		all = all && t.done
		last = max(last, t.resultS)
	}
	if all {
		s := last - r.end.TS
		tr.ToolS = &s
	}
}

// runToolsTokens is the size of the tool definitions the run's requests carried, in tokens
// estimated as a recording estimates them (4 bytes of compact JSON a token): 0 for a run
// without tools, and a note when the tool set cannot be read any more.
func runToolsTokens(w *workloads.Workload) (int, string) {
	if !w.Tools.Enabled() {
		return 0, ""
	}
	set, err := w.Tools.Definitions()
	if err != nil {
		return 0, fmt.Sprintf("tools_tokens: unknown, the run's tool set cannot be read: %v", err)
	}
	return (len(set.JSON()) + 3) / 4, ""
}
