package simserver

import (
	"strconv"

	"github.com/agentsim/agentsim/internal/engine"
)

// The wire form of a reply that calls tools (docs/engine.md §8). Streamed, each chunk after the
// reasoning carries tokens of one call: the first its name's tokens and the delta
// {"index","id","type":"function","function":{"name","arguments":""}}, the later ones
// {"index","function":{"arguments":piece}}, the piece being the text of the chunk's argument
// tokens — unless the style says otherwise (engine.ToolCallStyle). The finish reason is
// tool_calls. Whole, the message carries tool_calls and null content.

// toolCallsFinish is the finish_reason of a reply whose calls all went out.
const toolCallsFinish = "tool_calls"

// locate returns which call the reply's tool-call token t belongs to and its offset in it.
func (r *toolReply) locate(t int) (call, off int) {
	for i := range r.calls {
		n := r.calls[i].tokens()
		if t < n {
			return i, t
		}
		t -= n
	}
	return len(r.calls) - 1, r.calls[len(r.calls)-1].tokens()
}

// argBytes returns the argument text of the call's tokens [from, to): name tokens carry none.
func (c *plannedCall) argBytes(from, to int) []byte {
	a0, a1 := max(from-c.nameTokens, 0), max(to-c.nameTokens, 0)
	if a1 <= a0 {
		return nil
	}
	start := 0
	if a0 > 0 {
		start = c.ends[a0-1]
	}
	return c.args[start:c.ends[a1-1]]
}

// toolCall is a delta of n tokens of call i from its token off, in the given style.
func (c *chunkEncoder) toolCall(call *plannedCall, i, off, n int, style engine.ToolCallStyle) []byte {
	first := off == 0
	b := append(c.begin(), `"tool_calls":[{"index":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	if (first || style == engine.ToolCallsRepeatIDs) && style != engine.ToolCallsNoID {
		b = append(b, `,"id":"`...)
		b = append(b, call.id...)
		b = append(b, `","type":"function"`...)
	} else if first {
		b = append(b, `,"type":"function"`...)
	}
	b = append(b, `,"function":{`...)
	if first || style == engine.ToolCallsNameEveryChunk {
		b = append(b, `"name":`...)
		b = appendASCIIString(b, call.name)
		b = append(b, ',')
	}
	b = append(b, `"arguments":"`...)
	b = appendEscaped(b, call.argBytes(off, off+n))
	b = append(b, `"}}]`...)
	return c.end(b, "")
}

// wireToolCall is a tool call of a whole message.
type wireToolCall struct {
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// messageCalls is the tool_calls of a whole message whose first tokens tokens, after the
// reasoning, were generated: each call begun, its arguments as far as they came (all of them,
// unless max_tokens cut the reply).
func (r *toolReply) messageCalls(tokens int, style engine.ToolCallStyle) []wireToolCall {
	var out []wireToolCall
	for i := range r.calls {
		c := &r.calls[i]
		if tokens <= 0 {
			break
		}
		w := wireToolCall{ID: c.id, Type: "function", Function: wireFunction{Name: c.name, Arguments: string(c.argBytes(0, min(tokens, c.tokens())))}}
		if style == engine.ToolCallsNoID {
			w.ID = ""
		}
		out = append(out, w)
		tokens -= c.tokens()
	}
	return out
}

// toolStyle is how this request's tool calls are shaped: as the tool-call-style fault
// decided for it, or as the profile says.
func (x *exchange) toolStyle() engine.ToolCallStyle {
	if s := x.gen.Plan.ToolCallStyle; s != "" {
		return s
	}
	return x.s.opts.Profile.Agent.Style()
}

// finishReason is the reason the final chunk or the message gives: tool_calls for a reply
// whose calls all went out, else the engine's (stop or length).
func (x *exchange) finishReason() string {
	if x.req.reply != nil && x.gen.Finish == "stop" {
		return toolCallsFinish
	}
	return x.gen.Finish
}
