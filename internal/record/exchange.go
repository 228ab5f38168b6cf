package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/shown"
	"github.com/agentsim/agentsim/trace"
)

// exchange is one recorded request and its response. The handler's goroutine owns it; the
// atomics are read by Proxy.Open's snapshots.
type exchange struct {
	p     *Proxy
	ctx   context.Context // the harness's request
	id    uint64
	sendS float64 // when the request arrived, seconds since the recording began
	body  *parsedBody
	keys  []key // the request's prefix keys; once it is placed in its session, the last only
	conv  *convHash
	// promptB is the bytes of text of the request's messages and tool definitions, the basis
	// of its estimate; toolsB the definitions' part.
	promptB, toolsB int
	asg             assignment
	// twin is the request's group and messages (Proxy.resending); endedC, closed once end
	// has recorded the request, is what a re-send of the same messages waits on. Both are
	// unset for a request without messages.
	twin      twinKey
	endedC    chan struct{}
	api       string // trace.APIChat, APICompletions or APIResponses, by the path
	userAgent string
	hw        *headFirst // the harness's ResponseWriter

	// The response, as the tee has read it so far.
	status    int
	headersS  float64
	firstS    float64 // first output token (content, reasoning or a tool call), when first
	first     bool
	endS      float64 // the response's last byte
	reply     strings.Builder
	calls     []toolCall
	args      []strings.Builder // streamed arguments of calls, by index (see toolCalls)
	reasonB   int               // bytes of reasoning text
	outChunks int               // chunks that carried output
	finish    string
	usage     *usage
	done      bool         // the response ended as it should: [DONE], or a whole JSON body
	ended     bool         // the stream's last event arrived: [DONE], or a Responses stream's end
	eof       bool         // the server ended the body
	readErr   error        // how reading the body failed, other than its end
	failure   string       // why the request failed without a response (see Proxy.errorHandler)
	malformed events.Class // ClassMalformedSSE or ClassLineTooLong: the stream could not be read
	badWhy    string       // what was wrong with it, for the trace's error
	released  bool         // the lane is released
	awaits    bool         // the reply called tools: its line waits for the session's next request
	respID    string       // a Responses reply's id
	callAt    map[int]int  // a Responses stream's calls by output index
	memo      chunkMemo    // what the stream's last chat chunk leaves for the next

	lastByte atomic.Uint64 // math.Float64bits of the last byte's time; the send time before
	chunks   atomic.Int64  // reads that brought bytes
}

// byteAt notes bytes arriving at t.
func (x *exchange) byteAt(t float64) {
	x.lastByte.Store(math.Float64bits(t))
	x.chunks.Add(1)
	x.endS = t
}

// sseLine reads one line of an event stream, whose bytes arrived at t.
func (x *exchange) sseLine(line []byte, t float64) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, doneMarker) {
		x.done, x.ended = true, true
		return
	}
	if x.api == trace.APIResponses {
		x.responsesData(data, t)
		return
	}
	if c, ok := scanChunk(data, &x.memo); ok {
		if c.choice {
			x.delta(t, c.content, c.text, len(c.reasoningContent)+len(c.reasoning), nil, c.finish)
		}
		return
	}
	var c streamChunk
	if err := json.Unmarshal(data, &c); err != nil {
		// As the agents' client classifies it: a data line that is not a JSON chunk.
		x.badStream(events.ClassMalformedSSE, "a data line is not a JSON chunk: "+strconv.Quote(shown.Elide(string(data))))
		return
	}
	if msg := errorMessage(c.Error); msg != "" && x.failure == "" {
		x.failure = "error frame: " + msg
	}
	if c.Usage != nil {
		x.usage = c.Usage
	}
	for _, ch := range c.Choices {
		d := ch.Delta
		var finish []byte
		if ch.FinishReason != nil {
			finish = []byte(*ch.FinishReason)
		}
		x.delta(t, []byte(d.Content), []byte(ch.Text), len(d.ReasoningContent)+len(d.Reasoning), d.ToolCalls, finish)
	}
}

// delta reads one choice of a chat chunk that arrived at t: its content, legacy text, bytes
// of reasoning, tool-call deltas and finish reason ("" or none when it has none).
func (x *exchange) delta(t float64, content, text []byte, reasoning int, calls []toolCall, finish []byte) {
	if len(content)+len(text)+reasoning > 0 || len(calls) > 0 {
		x.outChunks++
		if !x.first {
			x.first, x.firstS = true, t
			reasoningFirst := len(content)+len(text) == 0 && reasoning > 0
			x.p.observe(func(o Observer) { o.FirstToken(x.seen(), t, reasoningFirst) })
		}
	}
	x.reply.Write(content)
	x.reply.Write(text)
	x.reasonB += reasoning
	x.addCalls(calls)
	if len(finish) > 0 {
		x.finish = finishReason(finish)
	}
}

// finishReason is b as a string, without allocating for the reasons servers send.
func finishReason(b []byte) string {
	switch string(b) {
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "tool_calls":
		return "tool_calls"
	}
	return string(b)
}

// lineTooLong notes a line of the stream longer than events.MaxStreamLineBytes.
func (x *exchange) lineTooLong() {
	x.badStream(events.ClassLineTooLong, events.ErrStreamLineTooLong.Error())
}

// badStream notes the first way the stream could not be read.
func (x *exchange) badStream(class events.Class, why string) {
	if x.malformed == "" {
		x.malformed, x.badWhy = class, why
	}
}

// addCalls merges streamed tool-call deltas by index: the first id, the name (once, though a
// server may repeat it in every chunk), the arguments' pieces in a builder, so that a long
// argument streamed in small pieces costs no more than its length.
func (x *exchange) addCalls(calls []toolCall) {
	for _, tc := range calls {
		if tc.Index < 0 || tc.Index > maxToolCalls {
			continue
		}
		for len(x.calls) <= tc.Index {
			x.calls = append(x.calls, toolCall{Index: len(x.calls)})
			x.args = append(x.args, strings.Builder{})
		}
		c := &x.calls[tc.Index]
		if c.ID == "" {
			c.ID = tc.ID
		}
		if tc.Function.Name != c.Function.Name {
			c.Function.Name += tc.Function.Name
		}
		x.args[tc.Index].WriteString(tc.Function.Arguments)
	}
}

// maxToolCalls bounds a streamed call's index: a reply with more calls than that is not a
// tool loop a trace describes, and an index is not a length to allocate.
const maxToolCalls = 1024

// toolCalls returns the reply's tool calls so far, their streamed arguments joined.
func (x *exchange) toolCalls() []toolCall {
	for i := range x.args {
		x.calls[i].Function.Arguments = x.args[i].String()
	}
	return x.calls
}

// parseJSON reads a whole JSON response: a completion, or an error.
func (x *exchange) parseJSON(b []byte) {
	if x.api == trace.APIResponses {
		x.parseResponseJSON(b)
		return
	}
	var r fullResponse
	if json.Unmarshal(b, &r) != nil {
		if x.status < 300 {
			// As the agents' client classifies a 2xx that is not an event stream.
			x.badStream(events.ClassMalformedSSE, "the response is neither an event stream nor a JSON completion")
		}
		return
	}
	x.done = x.status < 300
	if msg := errorMessage(r.Error); msg != "" {
		x.failure = msg
	}
	x.usage = r.Usage
	for _, ch := range r.Choices {
		x.reply.WriteString(contentText(ch.Message.Content))
		x.reply.WriteString(ch.Text)
		x.reasonB += len(ch.Message.ReasoningContent)
		x.calls = append(x.calls, ch.Message.ToolCalls...)
		x.finish = ch.FinishReason
		break // the conversation continues with the first choice
	}
}

// readEnded notes the end of the response body at t: io.EOF, or how reading it failed.
func (x *exchange) readEnded(t float64, err error) {
	x.endS = t
	if errors.Is(err, io.EOF) {
		x.eof = true
		return
	}
	x.readErr = err
}

// complete releases the request's lane once its reply is whole (or it failed), so that a
// request continuing the conversation finds it: it runs before the harness can see the end.
func (x *exchange) complete(t float64) {
	if x.released || x.asg.lane == nil {
		return
	}
	x.released = true
	e := ended{seq: x.asg.seq, sentS: x.sendS, endS: t}
	if len(x.keys) > 0 {
		e.key = x.keys[len(x.keys)-1]
	}
	if x.done && x.status < 300 && x.failure == "" && x.malformed == "" {
		prompt, out, _ := x.tokens()
		e.ok, e.tokens = true, prompt+out
		calls := x.toolCalls()
		e.key = x.conv.add("assistant", x.reply.String(), calls, "")
		e.calls, e.msgs = len(calls), x.body.messages+1
		for _, c := range calls {
			if c.ID != "" {
				e.callIDs = append(e.callIDs, c.ID)
			}
		}
		x.awaits = len(calls) > 0
		if x.respID != "" {
			x.p.chains.put(x.respID, x.asg.lane, x.conv)
		}
	}
	x.p.sessions.release(x.asg.lane, e)
}

// tokens returns the prompt and output tokens, from usage or estimated (about 4 bytes of
// text a token), and whether they are estimates.
func (x *exchange) tokens() (prompt, output int, estimated bool) {
	if u := x.usage; u != nil && (u.PromptTokens > 0 || u.CompletionTokens > 0) {
		return u.PromptTokens, u.CompletionTokens, false
	}
	prompt = (x.promptB + 3) / 4
	output = max((x.reply.Len()+x.reasonB+3)/4, x.outChunks)
	for _, c := range x.toolCalls() {
		output += (len(c.Function.Name) + len(c.Function.Arguments) + 3) / 4
	}
	return prompt, output, true
}

// outcome says how the request ended: events.ClassNone for a complete response (whatever its
// status), or its failure class and what happened.
func (x *exchange) outcome() (class events.Class, msg string) {
	switch {
	case x.status == 0 && x.ctx.Err() != nil:
		return events.ClassCancelled, "the harness closed the request before the server answered"
	case x.status == 0:
		return events.ClassConnect, x.failure
	case x.status >= 400:
		return events.ClassHTTPStatus, fmt.Sprintf("HTTP %d: %s", x.status, x.failure)
	case x.failure != "":
		return events.ClassErrorFrame, x.failure
	case x.malformed != "":
		return x.malformed, x.badWhy
	case x.done:
		return events.ClassNone, ""
	case x.readErr != nil && (x.ctx.Err() != nil || errors.Is(x.readErr, context.Canceled)):
		return events.ClassCancelled, "the harness closed the stream before its end"
	case x.readErr != nil:
		return events.ClassReset, "the server's connection failed mid-response: " + x.readErr.Error()
	case x.eof && x.api == trace.APIResponses:
		return events.ClassTruncated, "the server ended the response without response.completed"
	case x.eof:
		return events.ClassTruncated, "the server ended the response without [DONE]"
	}
	return events.ClassCancelled, "the harness closed the stream before its end"
}

// request builds the trace line of the ended request.
func (x *exchange) request() trace.Request {
	prompt, output, estimated := x.tokens()
	r := trace.Request{
		Session: x.asg.lane.name, Seq: x.asg.seq, TS: round6(x.sendS), AfterS: round6(x.asg.afterS),
		PromptTokens: prompt, OutputTokens: output, TokensEstimated: estimated,
		Model: x.body.req.Model, ReasoningEffort: x.body.req.ReasoningEffort, API: x.api,
		MaxTokens: x.body.maxTokens(),
		Status:    x.status, FinishReason: x.finish,
		E2ES: round6(max(x.endS-x.sendS, 0)),
	}
	if u := x.usage; u != nil && !estimated {
		if u.PromptTokensDetails != nil {
			r.CachedTokens = min(u.PromptTokensDetails.CachedTokens, prompt)
		}
		if u.CompletionTokensDetails != nil {
			r.ReasoningTokens = min(u.CompletionTokensDetails.ReasoningTokens, output)
		}
	}
	if x.first {
		r.TTFTS = min(round6(x.firstS-x.sendS), r.E2ES)
	}
	if x.asg.extends != nil {
		r.Extends = x.asg.extends
		r.NewTokens = min(max(prompt-x.asg.baseTok, 0), prompt)
	}
	if class, msg := x.outcome(); class != events.ClassNone {
		r.Error = string(class) + ": " + msg
	}
	r.ToolsTokens = (x.toolsB + 3) / 4
	if calls := x.toolCalls(); len(calls) > 0 {
		r.ToolCalls = len(calls)
		r.ToolNames = make([]string, len(calls))
		for i, c := range calls {
			r.ToolNames[i] = c.Function.Name
		}
	}
	return r
}

// round6 rounds seconds to the microsecond.
func round6(s float64) float64 { return math.Round(s*1e6) / 1e6 }
