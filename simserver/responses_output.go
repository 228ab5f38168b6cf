package simserver

import (
	"encoding/json"
	"strconv"

	"github.com/agentsim/agentsim/internal/engine"
)

// responseOutput says what a Responses API response's output items hold: a reasoning item
// when the generation reasons (its text as a summary when the request asked for one, as
// reasoning text otherwise), then one message, or one function_call item per planned call.
type responseOutput struct {
	suffix    string // the response id's hex part, which the item ids share
	key       uint64 // selects the words of the text
	reasoning int    // the generation's reasoning tokens
	summary   bool
	reply     *toolReply
}

// outputs is the exchange's responseOutput.
func (x *exchange) outputs() *responseOutput {
	return &responseOutput{suffix: x.id[len("resp_"):], key: x.gen.Key(), reasoning: x.gen.Reasoning,
		summary: x.req.responses.summary != "", reply: x.req.reply}
}

// Kinds of output item.
type itemKind int

const (
	itemNone itemKind = iota
	itemReasoning
	itemMessage
	itemCall
)

// firstAfterReasoning is the output index of the message or of the first call.
func (o *responseOutput) firstAfterReasoning() int {
	if o.reasoning > 0 {
		return 1
	}
	return 0
}

// appendID appends the id of an item: rs_, msg_ or fc_ and the response's suffix, and a
// call's index.
func (o *responseOutput) appendID(b []byte, kind itemKind, call int) []byte {
	switch kind {
	case itemReasoning:
		b = append(b, "rs_"...)
	case itemMessage:
		b = append(b, "msg_"...)
	default:
		b = append(b, "fc_"...)
	}
	b = append(b, o.suffix...)
	if kind == itemCall {
		b = append(b, '_')
		b = strconv.AppendInt(b, int64(call), 10)
	}
	return b
}

// appendReasoning appends the reasoning item holding tokens of reasoning (none: as added).
func (o *responseOutput) appendReasoning(b []byte, tokens int) []byte {
	b = append(b, `{"id":"`...)
	b = o.appendID(b, itemReasoning, 0)
	b = append(b, `","type":"reasoning","summary":[`...)
	if o.summary {
		if tokens > 0 {
			b = append(b, `{"type":"summary_text","text":"`...)
			b = append(appendWords(b, o.key, 0, tokens), `"}`...)
		}
		return append(b, "]}"...)
	}
	b = append(b, `],"content":[`...)
	if tokens > 0 {
		b = append(b, `{"type":"reasoning_text","text":"`...)
		b = append(appendWords(b, o.key, 0, tokens), `"}`...)
	}
	return append(b, "]}"...)
}

// appendMessage appends the message item holding tokens of text (whole: every part, even
// when tokens is 0; else as added, without parts), in status.
func (o *responseOutput) appendMessage(b []byte, tokens int, status string, whole bool) []byte {
	b = append(b, `{"id":"`...)
	b = o.appendID(b, itemMessage, 0)
	b = append(b, `","type":"message","status":"`...)
	b = append(b, status...)
	b = append(b, `","role":"assistant","content":[`...)
	if whole {
		b = append(b, `{"type":"output_text","text":"`...)
		b = appendWords(b, o.key, o.reasoning, tokens)
		b = append(b, `","annotations":[],"logprobs":[]}`...)
	}
	return append(b, "]}"...)
}

// appendCall appends call i's function_call item with its arguments of its first tokens, in
// status; the no-id style leaves call_id out.
func (o *responseOutput) appendCall(b []byte, i, tokens int, status string, style engine.ToolCallStyle) []byte {
	c := &o.reply.calls[i]
	b = append(b, `{"id":"`...)
	b = o.appendID(b, itemCall, i)
	b = append(b, `","type":"function_call","status":"`...)
	b = append(b, status...)
	b = append(b, '"')
	if style != engine.ToolCallsNoID {
		b = append(b, `,"call_id":"`...)
		b = append(b, c.id...)
		b = append(b, '"')
	}
	b = append(b, `,"name":`...)
	b = appendASCIIString(b, c.name)
	b = append(b, `,"arguments":"`...)
	b = appendEscaped(b, c.argBytes(0, tokens))
	return append(b, `"}`...)
}

// items are the output items of a response whose first sent tokens were generated: each
// item begun, complete or, when the generation stopped inside it, incomplete; the message
// in msgStatus.
func (o *responseOutput) items(sent int, msgStatus string, style engine.ToolCallStyle) []json.RawMessage {
	out := []json.RawMessage{}
	if o.reasoning > 0 && sent > 0 {
		out = append(out, o.appendReasoning(nil, min(sent, o.reasoning)))
	}
	after := max(sent-o.reasoning, 0)
	if o.reply == nil {
		if sent >= o.reasoning {
			out = append(out, o.appendMessage(nil, after, msgStatus, true))
		}
		return out
	}
	for i := range o.reply.calls {
		if after <= 0 {
			break
		}
		n := o.reply.calls[i].tokens()
		status := statusCompleted
		if after < n {
			status = statusIncomplete
		}
		out = append(out, o.appendCall(nil, i, min(after, n), status, style))
		after -= n
	}
	return out
}
