package simserver

import (
	"errors"
	"net/http"

	"github.com/agentsim/agentsim/internal/engine"
)

// stream answers with the SSE stream of chat.completion.chunk frames. When the HTTP head and
// the role chunk go out is the profile's FirstByte: at admission (a request that never gets a
// token, pinned in prefill or wedged in decode, is an open, silent stream), the head at
// admission and the role chunk with the first token (vLLM), or nothing at all before the
// first token (SGLang: such a request has no response head). Then come the reasoning deltas,
// then the content deltas or the tool calls (a chunk never mixes two of them, nor two calls;
// see toolwire.go), each chunk flushed as it is written; then the finish chunk, the usage
// chunk when asked for, and [DONE] — unless a fault ends the stream with an error frame or
// cuts it.
//
// Each chunk carries the profile's stream interval of tokens, whatever the speedup. A writer
// that falls behind the engine sends its backlog as consecutive chunks of that size, or
// coalesces it up to the profile's coalesce limit; either way it is counted (see
// chunkStats), never silent.
//
// Served in-process, the stream outlives its handler once it is admitted: the chunks, and the
// head when the profile sends it with the first token, are written on the client's goroutine
// as it waits for them (continueWith), so thousands of open streams cost no goroutine of the
// simulator's (docs/speed.md). A client that reads late then takes its tokens late, and the
// engine's lag measure counts it (Engine.Delivered), as it would a writer that fell behind.
func (x *exchange) stream() {
	prof := x.s.opts.Profile
	mode := prof.FirstByteMode()
	if x.req.responses != nil {
		x.enc = x.newEventEncoder()
	} else {
		x.enc = newChunkEncoder(x.id, x.created, x.model, x.s.reasoningField, x.req.IncludeUsage, x.gen.Key())
	}
	if mode != engine.FirstByteAtToken {
		x.head()
	}
	if mode == engine.FirstByteAtAdmission && !x.sendRole() {
		x.abort()
	}
	x.interval, x.coalesce = prof.ChunkTokens(), prof.CoalesceTokens()
	x.at, x.how = x.gen.End()
	x.style = x.toolStyle()
	if x.w.continueWith(x.next) {
		return
	}
	for x.next() {
	}
}

// next writes the stream's next chunk, or its ending; false once the stream has ended.
func (x *exchange) next() bool {
	if x.sent >= x.at {
		x.end()
		return false
	}
	reasoning := x.sent < x.gen.Reasoning
	atLeast, atMost, call, off := x.chunkBounds(reasoning)
	n, _, err := x.gen.NextChunk(x.ctx, atLeast, atMost)
	ok := err == nil && n > 0
	if ab := (*engine.Aborted)(nil); errors.As(err, &ab) {
		x.giveUp(finishError)
		if ab.Stage == engine.StageKVFull {
			// llama.cpp's: before the stream has begun, a 500 body; after, the error frame
			// and no [DONE].
			if !x.headSent {
				writeError(x.w, &apiError{Status: http.StatusInternalServerError, Type: "server_error", Message: ab.Error()})
				return false
			}
			x.enc.kvFull(x.send)
			return false
		}
		x.head()
		// SGLang's first chunk is then the error: a 200 head, the frame, [DONE].
		x.enc.aborted(ab.Error(), x.send)
		return false
	}
	if !ok || !x.sendRole() || !x.send(x.frame(n, reasoning, call, off)) {
		x.abort()
	}
	// A call's name goes out whole, however long: that is not coalescing.
	x.s.metrics.chunk(n, max(x.interval, atLeast), x.gen.Pending())
	x.s.engine.Delivered(x.gen)
	x.delivered(n)
	return true
}

// chunkBounds says how many tokens the next chunk takes, at least and at most: the stream
// interval and the coalesce limit, within the ending, the reasoning and the tool call the
// chunk is of (call, its first token at off in it), whose first chunk is its name's tokens,
// all of them.
func (x *exchange) chunkBounds(reasoning bool) (atLeast, atMost, call, off int) {
	boundary := x.at - x.sent
	atLeast, atMost = x.interval, x.coalesce
	switch r := x.req.reply; {
	case reasoning:
		boundary = min(boundary, x.gen.Reasoning-x.sent)
	case r != nil:
		call, off = r.locate(x.sent - x.gen.Reasoning)
		c := &r.calls[call]
		boundary = min(boundary, c.tokens()-off)
		if off < c.nameTokens {
			boundary = min(boundary, c.nameTokens-off)
			atLeast, atMost = boundary, boundary
		}
	}
	return min(atLeast, boundary), min(atMost, boundary), call, off
}

// frame is the chunk of the n tokens from the next: reasoning, content, or of tool call call
// from its token off.
func (x *exchange) frame(n int, reasoning bool, call, off int) []byte {
	if r := x.req.reply; r != nil && !reasoning {
		return x.enc.toolCall(&r.calls[call], call, off, n, x.style)
	}
	return x.enc.tokens(x.sent, n, reasoning)
}

// end writes the stream's ending: the finish chunk, the usage chunk when asked for, and
// [DONE]; or the error frame or the cut the faults planned.
func (x *exchange) end() {
	if !x.sendRole() {
		x.abort()
	}
	switch x.how {
	case engine.EndCut:
		x.cut()
	case engine.EndFail:
		x.giveUp(finishError)
		x.enc.failed(x.send)
	default:
		x.s.metrics.finished(x.gen.Finish)
		x.enc.finished(x.finishReason(), x.usage(), x.send)
		x.stored()
	}
}

// head writes the response head of a stream and flushes it, once.
func (x *exchange) head() {
	if x.headSent {
		return
	}
	x.headSent = true
	h := x.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	x.w.WriteHeader(http.StatusOK)
	_ = x.w.FlushError() // a failed connection shows at the next write
}

// sendRole sends the head, when it has not gone out, and the role chunk, once; false means the
// connection failed.
func (x *exchange) sendRole() bool {
	if x.roleSent {
		return true
	}
	x.head()
	x.roleSent = true
	return x.send(x.enc.opening())
}

// streamEncoder builds the frames of one stream: chat.completion.chunk frames (chunkEncoder)
// or the Responses API's events (eventEncoder). A frame it returns is valid until its next
// call or release; the methods that write take send, which writes one frame.
type streamEncoder interface {
	// opening is what goes out before the first token: the role chunk, or the events
	// response.created and response.in_progress.
	opening() []byte
	// tokens is n tokens of reasoning or content from token index from.
	tokens(from, n int, reasoning bool) []byte
	// toolCall is n tokens of tool call i from its token off.
	toolCall(call *plannedCall, i, off, n int, style engine.ToolCallStyle) []byte
	// finished writes the end of a generation that finished for reason (toolCallsFinish,
	// "stop" or "length"), with its usage.
	finished(reason string, u usage, send func([]byte) bool)
	// failed writes the in-stream failure the errors fault plans.
	failed(send func([]byte) bool)
	// aborted writes the in-stream error of a generation the engine aborted.
	aborted(message string, send func([]byte) bool)
	// kvFull writes the in-stream error of a generation the KV pool had no room for
	// (engine.StageKVFull), after which the stream ends.
	kvFull(send func([]byte) bool)
	// release gives the frame buffer back once the frame has been written.
	release()
}

// send writes one frame and flushes it to the client; false means the connection failed.
// The encoder's buffer goes back to its pool once the frame is written.
func (x *exchange) send(frame []byte) bool {
	_, err := x.w.Write(frame)
	x.enc.release()
	if err != nil {
		return false
	}
	return x.w.FlushError() == nil
}
