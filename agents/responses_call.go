package agents

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/events"
)

// The Responses API's stream, read as the chat stream is (docs/agentic.md): every data line
// is a frame, timed and counted alike; output_text deltas are content, reasoning summary
// and reasoning text deltas reasoning; a function_call output item opens a tool call (its
// first token, as a chat call's first delta is) and its argument deltas fill it. The stream
// ends with response.completed (finish reason stop, or tool_calls when the reply called
// tools) or response.incomplete (length for max_output_tokens), whose usage is the call's;
// response.failed and an error event are error frames. There is no [DONE].

// maxOutputItems bounds the output_index of a function call: a reply with more output items
// than that is not one a harness answers, and an index is not a length to allocate.
const maxOutputItems = 1024

// readResponses consumes a Responses event stream until its terminal event or an error.
func (k *call) readResponses(st *sseReader) error {
	k.rf = new(rframe)
	for {
		line, err := st.next()
		now := k.clk.Now()
		if err != nil {
			return k.endedResponses(err)
		}
		k.tick(now)
		done, err := k.event(line, now)
		if err != nil || done {
			return err
		}
	}
}

// endedResponses turns the error that ended a Responses stream before its terminal event
// into the call's error.
func (k *call) endedResponses(err error) error {
	if !errors.Is(err, io.EOF) {
		return err
	}
	if k.res.Chunks == 0 && !isEventStream(k.contentType) {
		return fmt.Errorf("%w (Content-Type %q)", errNotEventStream, k.contentType)
	}
	return fmt.Errorf("stream ended before response.completed: %w", io.ErrUnexpectedEOF)
}

// event applies one Responses event; done reports the terminal event of a reply.
func (k *call) event(line []byte, now time.Time) (done bool, err error) {
	f := k.rf
	if !scanEvent(line, f) {
		if err := k.decodeEvent(line); err != nil {
			return false, err
		}
	}
	if f.hasUsage {
		k.res.Usage = f.usage
	}
	typ := f.typ.raw
	if f.typ.esc {
		typ = f.typ.appendTo(nil)
	}
	hasDelta := len(f.delta.raw) > 0
	switch string(typ) {
	case "response.output_text.delta":
		if hasDelta {
			k.contentDelta(f.delta, now)
			k.res.TokenChunks++
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if hasDelta {
			k.reasoningDelta(f.delta, now)
			k.res.TokenChunks++
		}
	case "response.output_item.added":
		k.itemAdded(f, now)
	case "response.function_call_arguments.delta":
		if hasDelta {
			k.callArguments(f)
			k.res.TokenChunks++
		}
	case "response.function_call_arguments.done", "response.output_item.done":
		k.callDone(f)
	case "response.completed":
		k.res.FinishReason = events.FinishStop
		if len(k.tools) > 0 {
			k.res.FinishReason = "tool_calls"
		}
		return true, nil
	case "response.incomplete":
		k.res.FinishReason = events.FinishReason(f.incomplete.appendTo(nil))
		if f.incomplete.equals("max_output_tokens") {
			k.res.FinishReason = events.FinishLength
		}
		return true, nil
	case "response.failed":
		return true, fmt.Errorf("response.failed: %w", eventError(f, line))
	case "error":
		return true, fmt.Errorf("error event: %w", eventError(f, line))
	}
	return false, nil
}

// decodeEvent decodes an event the scanner does not take into k.rf (see call.decode).
//
//go:noinline
func (k *call) decodeEvent(line []byte) error {
	var err error
	if *k.rf, err = decodeEvent(line); err != nil {
		return fmt.Errorf("data line %s: %w", quoteShort(line), err)
	}
	return nil
}

// itemAdded notes a new output item: a message announces the role, a function_call opens a
// tool call at its output index.
func (k *call) itemAdded(f *rframe, now time.Time) {
	it := &f.item
	switch {
	case it.typ.equals("message") && k.res.Role == "" && len(it.role.raw) > 0:
		k.res.Role = string(it.role.appendTo(nil))
	case it.typ.equals("function_call"):
		i := k.callAt(f, true)
		if i < 0 {
			return
		}
		b := &k.tools[i]
		b.id, b.name = string(it.callID.appendTo(nil)), string(it.name.appendTo(nil))
		b.args = it.arguments.appendTo(b.args)
		k.res.TokenChunks++
		if k.res.FirstToolCall.IsZero() {
			k.res.FirstToolCall = now
			k.firstToken(now)
			k.obs.FirstToolCall(now)
		}
	}
}

// callArguments appends an arguments delta to the call of its output index.
func (k *call) callArguments(f *rframe) {
	if i := k.callAt(f, false); i >= 0 {
		k.tools[i].args = f.delta.appendTo(k.tools[i].args)
	}
}

// callDone takes a call's whole arguments from function_call_arguments.done or its
// output_item.done when no delta brought them (a server that streams none).
func (k *call) callDone(f *rframe) {
	args := f.arguments
	if f.hasItem {
		if !f.item.typ.equals("function_call") {
			return
		}
		args = f.item.arguments
	}
	if i := k.callAt(f, false); i >= 0 && len(k.tools[i].args) == 0 {
		k.tools[i].args = args.appendTo(k.tools[i].args)
	}
}

// callAt is the tool call of the event's output index, opened when open; -1 when there is
// none, and the reply is then malformed.
func (k *call) callAt(f *rframe, open bool) int {
	switch {
	case !f.hasOutputIndex:
		k.problem("a function call event has no output_index")
		return -1
	case f.outputIndex < 0 || f.outputIndex >= maxOutputItems:
		k.problem(fmt.Sprintf("a function call event has output_index %d", f.outputIndex))
		return -1
	}
	for len(k.callItems) <= f.outputIndex {
		k.callItems = append(k.callItems, -1)
	}
	i := k.callItems[f.outputIndex]
	switch {
	case i >= 0 && open:
		k.problem(fmt.Sprintf("output_index %d opens a second function_call", f.outputIndex))
		return -1
	case i >= 0:
		return i
	case !open:
		k.problem(fmt.Sprintf("a function call event names output_index %d, which no function_call item opened", f.outputIndex))
		return -1
	}
	k.callItems[f.outputIndex] = len(k.tools)
	k.tools = append(k.tools, toolBuild{})
	return len(k.tools) - 1
}

// problem notes the first reason the reply's tool calls cannot be assembled.
func (k *call) problem(p string) {
	if k.toolProblem == "" {
		k.toolProblem = p
	}
}

// eventError is the error of a response.failed or error event: its code and message, or the
// line itself when it has no message.
func eventError(f *rframe, line []byte) *openai.APIError {
	e := &openai.APIError{Message: string(f.message.appendTo(nil))}
	if len(f.code.raw) > 0 {
		e.Code = string(f.code.appendTo(nil))
	}
	if e.Message == "" {
		e.Message = quoteShort(line)
	}
	return e
}
