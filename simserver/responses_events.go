package simserver

import (
	"strconv"

	"github.com/agentsim/agentsim/internal/engine"
)

// eventEncoder builds the server-sent events of one streamed Responses API response, in the
// API's order: response.created and response.in_progress; for each output item
// response.output_item.added, its deltas, and its done events once the next item begins or the
// response ends; then response.completed (response.incomplete when max_output_tokens cut it)
// with the whole response and its usage. Each event is "event: <type>" and a data line with its
// JSON, whose type and sequence_number (0, 1, … in the stream) come first.
//
// Reasoning is response.reasoning_summary_text.delta events when the request asked for a
// summary (reasoning.summary), response.reasoning_text.delta events otherwise, so every chunk
// the engine delivers is an event, as on chat completions. A message is
// response.content_part.added and response.output_text.delta events; a call is a
// function_call item (call_id and name) and response.function_call_arguments.delta events.
// The tool-call styles shape the calls: no-id leaves call_id out; repeat-ids and
// name-every-chunk repeat call_id or name on every arguments delta.
//
// Like chunkEncoder it appends into one pooled buffer: a delta allocates nothing. And as
// chunkEncoder's head does for a chunk, delta holds every byte of the open item's delta event
// but its sequence number and its text, built once as the item begins: a delta event is the
// same few appends as a chunk.
type eventEncoder struct {
	frameBuf
	out *responseOutput
	// object renders the response object in a status, with usage when not nil.
	object func(status string, u *usage) []byte
	seq    seqNumber
	// style is the open call's tool-call style, for its added and done items as for its
	// deltas.
	style engine.ToolCallStyle

	open            itemKind // the item being streamed
	call            int      // the open call, when open is itemCall
	reasoningTokens int      // tokens of the reasoning, the message and the open call sent
	textTokens      int
	callTokens      int
	// msgStatus is the status the message closes in: incomplete once max_output_tokens cut
	// the response.
	msgStatus string
	// delta is the open item's delta event up to its text: the event line and the data up to
	// the sequence number (delta[:deltaSeq]), then item_id, output_index and the members
	// before the delta string, up to its opening quote.
	delta    []byte
	deltaSeq int
}

var _ streamEncoder = (*eventEncoder)(nil)

// newEventEncoder prepares the events of the exchange's response.
func (x *exchange) newEventEncoder() *eventEncoder {
	return &eventEncoder{out: x.outputs(), object: x.responseObject, msgStatus: statusCompleted}
}

// event starts an event of type typ: its event line, then its data up to the sequence number,
// after which the caller appends its members and endEvent closes it.
func (e *eventEncoder) event(b []byte, typ string) []byte {
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	b = e.seq.appendNext(b)
	return b
}

// seqNumber is a stream's next sequence number, kept as its decimal digits and counted up in
// place: an event appends it as it appends fixed bytes, instead of formatting an integer.
// The zero value is 0.
type seqNumber struct {
	digits [20]byte // the number, right-aligned: digits[len(digits)-n:]
	n      int
}

// appendNext appends the number, then counts it up.
func (s *seqNumber) appendNext(b []byte) []byte {
	if s.n == 0 {
		s.digits[len(s.digits)-1], s.n = '0', 1
	}
	b = append(b, s.digits[len(s.digits)-s.n:]...)
	for i := len(s.digits) - 1; ; i-- {
		if i < len(s.digits)-s.n {
			s.digits[i] = '1'
			s.n++
			return b
		}
		if s.digits[i] < '9' {
			s.digits[i]++
			return b
		}
		s.digits[i] = '0'
	}
}

// endEvent closes an event's data.
func endEvent(b []byte) []byte { return append(b, "}\n\n"...) }

// itemRef appends the open item's item_id and output_index.
func (e *eventEncoder) itemRef(b []byte) []byte {
	b = append(b, `,"item_id":"`...)
	b = e.out.appendID(b, e.open, e.call)
	b = append(b, `","output_index":`...)
	return strconv.AppendInt(b, int64(e.outputIndex()), 10)
}

// outputIndex is the open item's index in the output.
func (e *eventEncoder) outputIndex() int {
	switch e.open {
	case itemReasoning:
		return 0
	case itemCall:
		return e.out.firstAfterReasoning() + e.call
	}
	return e.out.firstAfterReasoning()
}

// opening is response.created and response.in_progress.
func (e *eventEncoder) opening() []byte {
	b := e.reset()
	obj := e.object(statusInProgress, nil)
	for _, typ := range []string{"response.created", "response.in_progress"} {
		b = e.event(b, typ)
		b = append(b, `,"response":`...)
		b = endEvent(append(b, obj...))
	}
	e.buf = b
	return b
}

// tokens is a delta of n tokens from token index from, of the reasoning or of the message,
// after the events that begin its item.
func (e *eventEncoder) tokens(from, n int, reasoning bool) []byte {
	b := e.reset()
	if reasoning {
		if e.open != itemReasoning {
			b = e.begin(b, itemReasoning, 0)
		}
		b = endEvent(append(appendWords(e.deltaEvent(b), e.out.key, from, n), '"'))
		e.reasoningTokens += n
	} else {
		if e.open != itemMessage {
			b = e.begin(e.close(b), itemMessage, 0)
		}
		b = endEvent(append(appendWords(e.deltaEvent(b), e.out.key, from, n), `","logprobs":[]`...))
		e.textTokens += n
	}
	e.buf = b
	return b
}

// toolCall is n tokens of call i from its token off: the call's function_call item when it
// begins, then its arguments' delta.
func (e *eventEncoder) toolCall(call *plannedCall, i, off, n int, style engine.ToolCallStyle) []byte {
	b := e.reset()
	if e.open != itemCall || e.call != i {
		b = e.close(b)
		e.style = style
		b = e.begin(b, itemCall, i)
	}
	e.callTokens = off + n
	if args := call.argBytes(off, off+n); len(args) > 0 {
		b = endEvent(append(appendEscaped(e.deltaEvent(b), args), '"'))
	}
	e.buf = b
	return b
}

// deltaEvent appends the open item's delta event up to its text (delta), with the next
// sequence number.
func (e *eventEncoder) deltaEvent(b []byte) []byte {
	b = append(b, e.delta[:e.deltaSeq]...)
	b = e.seq.appendNext(b)
	return append(b, e.delta[e.deltaSeq:]...)
}

// openDelta builds delta for the item begun: its delta event's type, and the members between
// its item reference and its delta string, which for a call the tool-call style decides.
func (e *eventEncoder) openDelta() {
	typ, members := "response.output_text.delta", `,"content_index":0`
	switch e.open {
	case itemReasoning:
		typ = "response.reasoning_text.delta"
		if e.out.summary {
			typ, members = "response.reasoning_summary_text.delta", `,"summary_index":0`
		}
	case itemCall:
		typ, members = "response.function_call_arguments.delta", ""
	}
	d := append(e.delta[:0], "event: "...)
	d = append(d, typ...)
	d = append(d, "\ndata: {\"type\":\""...)
	d = append(d, typ...)
	d = append(d, `","sequence_number":`...)
	e.deltaSeq = len(d)
	d = append(e.itemRef(d), members...)
	if e.open == itemCall {
		c := &e.out.reply.calls[e.call]
		switch e.style {
		case engine.ToolCallsRepeatIDs:
			d = append(append(append(d, `,"call_id":"`...), c.id...), '"')
		case engine.ToolCallsNameEveryChunk:
			d = appendASCIIString(append(d, `,"name":`...), c.name)
		}
	}
	e.delta = append(d, `,"delta":"`...)
}

// begin opens an item: response.output_item.added, and for a message its content part, for a
// summary its summary part.
func (e *eventEncoder) begin(b []byte, kind itemKind, call int) []byte {
	e.open, e.call, e.callTokens = kind, call, 0
	e.openDelta()
	b = e.event(b, "response.output_item.added")
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(e.outputIndex()), 10)
	b = append(b, `,"item":`...)
	switch kind {
	case itemReasoning:
		b = endEvent(e.out.appendReasoning(b, 0))
		if e.out.summary {
			b = e.itemRef(e.event(b, "response.reasoning_summary_part.added"))
			b = endEvent(append(b, `,"summary_index":0,"part":{"type":"summary_text","text":""}`...))
		}
	case itemMessage:
		b = endEvent(e.out.appendMessage(b, 0, statusInProgress, false))
		b = e.itemRef(e.event(b, "response.content_part.added"))
		b = endEvent(append(b, `,"content_index":0,"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]}`...))
	case itemCall:
		b = endEvent(e.out.appendCall(b, call, 0, statusInProgress, e.style))
	}
	return b
}

// close writes the done events of the open item, if any: its text or arguments whole, then
// response.output_item.done with the item.
func (e *eventEncoder) close(b []byte) []byte {
	switch e.open {
	case itemNone:
		return b
	case itemReasoning:
		text := func(b []byte) []byte { return appendWords(b, e.out.key, 0, e.reasoningTokens) }
		if e.out.summary {
			b = append(e.itemRef(e.event(b, "response.reasoning_summary_text.done")), `,"summary_index":0,"text":"`...)
			b = endEvent(append(text(b), '"'))
			b = append(e.itemRef(e.event(b, "response.reasoning_summary_part.done")), `,"summary_index":0,"part":{"type":"summary_text","text":"`...)
			b = endEvent(append(text(b), `"}`...))
		} else {
			b = append(e.itemRef(e.event(b, "response.reasoning_text.done")), `,"content_index":0,"text":"`...)
			b = endEvent(append(text(b), '"'))
		}
		b = e.itemDone(b)
		b = endEvent(e.out.appendReasoning(b, e.reasoningTokens))
	case itemMessage:
		text := func(b []byte) []byte { return appendWords(b, e.out.key, e.out.reasoning, e.textTokens) }
		b = append(e.itemRef(e.event(b, "response.output_text.done")), `,"content_index":0,"text":"`...)
		b = endEvent(append(text(b), `","logprobs":[]`...))
		b = append(e.itemRef(e.event(b, "response.content_part.done")), `,"content_index":0,"part":{"type":"output_text","text":"`...)
		b = endEvent(append(text(b), `","annotations":[],"logprobs":[]}`...))
		b = e.itemDone(b)
		b = endEvent(e.out.appendMessage(b, e.textTokens, e.msgStatus, true))
	case itemCall:
		c := &e.out.reply.calls[e.call]
		b = append(e.itemRef(e.event(b, "response.function_call_arguments.done")), `,"arguments":"`...)
		b = endEvent(append(appendEscaped(b, c.argBytes(0, e.callTokens)), '"'))
		b = e.itemDone(b)
		status := statusCompleted
		if e.callTokens < c.tokens() {
			status = statusIncomplete
		}
		b = endEvent(e.out.appendCall(b, e.call, e.callTokens, status, e.style))
	}
	e.open = itemNone
	return b
}

// itemDone starts response.output_item.done up to its item.
func (e *eventEncoder) itemDone(b []byte) []byte {
	idx := e.outputIndex()
	b = e.event(b, "response.output_item.done")
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(idx), 10)
	return append(b, `,"item":`...)
}

// finished writes the done events of the last item, then response.completed, or
// response.incomplete when the generation ended at its length limit.
func (e *eventEncoder) finished(reason string, u usage, send func([]byte) bool) {
	status, typ := statusCompleted, "response.completed"
	if reason == "length" {
		status, typ = statusIncomplete, "response.incomplete"
		e.msgStatus = statusIncomplete
	}
	b := e.close(e.reset())
	b = append(e.event(b, typ), `,"response":`...)
	b = endEvent(append(b, e.object(status, &u)...))
	e.buf = b
	send(b)
}

// failed writes the done events of the open item, incomplete, then response.failed: the
// response, failed, with the output delivered so far.
func (e *eventEncoder) failed(send func([]byte) bool) {
	e.msgStatus = statusIncomplete
	b := e.close(e.reset())
	b = append(e.event(b, "response.failed"), `,"response":`...)
	b = endEvent(append(b, e.object(statusFailed, nil)...))
	e.buf = b
	send(b)
}

// kvFull implements streamEncoder: the error event, with llama.cpp's words.
func (e *eventEncoder) kvFull(send func([]byte) bool) { e.aborted(engine.ContextExceeded, send) }

// aborted writes the API's error event.
func (e *eventEncoder) aborted(message string, send func([]byte) bool) {
	b := append(e.event(e.reset(), "error"), `,"code":"server_error","message":`...)
	b = appendASCIIString(b, message)
	b = endEvent(append(b, `,"param":null`...))
	e.buf = b
	send(b)
}
