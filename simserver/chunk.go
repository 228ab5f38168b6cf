package simserver

import (
	"encoding/json"
	"strconv"
	"sync"

	"github.com/agentsim/agentsim/internal/engine"
)

// Fixed pieces of the chat.completion.chunk frames.
const (
	choiceOpen   = `{"index":0,"delta":{`
	choiceClose  = `},"logprobs":null,"finish_reason":null}`
	roleDelta    = `"role":"assistant","content":""`
	contentField = `"content":"`
	usageNull    = `,"usage":null`
	frameEnd     = "}\n\n"
)

// doneFrame ends every stream that is not cut.
var doneFrame = []byte("data: [DONE]\n\n")

// usage is the token accounting of one completion.
type usage struct {
	Prompt, Completion, Cached, Reasoning int
}

// chunkEncoder builds the SSE frames of one streamed completion by appending bytes into one
// reused buffer: no encoding/json and no allocation per chunk. Every frame it returns is valid
// until the next call or release. The buffer is pooled between frames (release): thousands of
// streams waiting for their next tokens hold none.
type chunkEncoder struct {
	// head is `data: {"id":…,"object":"chat.completion.chunk","created":…,"model":…,"choices":[`.
	head []byte
	// reasoningField is `"<field>":"` for reasoning deltas.
	reasoningField string
	// includeUsage adds "usage":null to every chunk before the usage chunk.
	includeUsage bool
	key          uint64 // selects the words of the text
	frameBuf
}

var _ streamEncoder = (*chunkEncoder)(nil)

// frameBuf is an encoder's reused buffer, pooled between frames.
type frameBuf struct {
	buf    []byte  // the frame being built
	pooled *[]byte // where buf came from and goes back to; nil while the encoder holds none
}

// frameBuffers holds the buffers of encoders between frames.
var frameBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// reset returns the encoder's buffer emptied, taking one from the pool if it holds none.
func (c *frameBuf) reset() []byte {
	if c.pooled == nil {
		c.pooled = frameBuffers.Get().(*[]byte)
		c.buf = *c.pooled
	}
	return c.buf[:0]
}

// release gives the buffer back to the pool once the frame built in it has been written.
func (c *frameBuf) release() {
	if c.pooled != nil {
		*c.pooled = c.buf[:0]
		frameBuffers.Put(c.pooled)
	}
	c.pooled, c.buf = nil, nil
}

// quotedField is `"<field>":"`, the opening of a delta member named field.
func quotedField(field string) string { return `"` + field + `":"` }

// newChunkEncoder prepares the frames of completion id for the request; model is the JSON
// string (quotes included) echoed back, reasoningField the reasoning member's opening
// (quotedField).
func newChunkEncoder(id string, created int64, model []byte, reasoningField string, includeUsage bool, key uint64) *chunkEncoder {
	head := make([]byte, 0, 96+len(id)+len(model))
	head = append(head, `data: {"id":"`...)
	head = append(head, id...)
	head = append(head, `","object":"chat.completion.chunk","created":`...)
	head = strconv.AppendInt(head, created, 10)
	head = append(head, `,"model":`...)
	head = append(head, model...)
	head = append(head, `,"choices":[`...)
	return &chunkEncoder{head: head, reasoningField: reasoningField, includeUsage: includeUsage, key: key}
}

// begin starts a choice frame in the reused buffer: the head, then the opening of choice 0
// and its delta, whose members the caller appends.
func (c *chunkEncoder) begin() []byte {
	b := append(c.reset(), c.head...)
	return append(b, choiceOpen...)
}

// end closes the delta begun by begin with finish as finish_reason (null when ""), adds
// "usage":null when the request asked for usage, and ends the frame.
func (c *chunkEncoder) end(b []byte, finish string) []byte {
	if finish == "" {
		b = append(b, choiceClose...)
	} else {
		b = append(b, `},"logprobs":null,"finish_reason":"`...)
		b = append(b, finish...)
		b = append(b, `"}`...)
	}
	b = append(b, ']')
	if c.includeUsage {
		b = append(b, usageNull...)
	}
	b = append(b, frameEnd...)
	c.buf = b
	return b
}

// opening is the first frame: the assistant role with empty content.
func (c *chunkEncoder) opening() []byte {
	return c.end(append(c.begin(), roleDelta...), "")
}

// finished writes the end of a generation that finished: the finish chunk, the usage chunk
// when asked for, and [DONE].
func (c *chunkEncoder) finished(reason string, u usage, send func([]byte) bool) {
	ok := send(c.finish(reason))
	if ok && c.includeUsage {
		ok = send(c.usage(u))
	}
	_ = ok && send(doneFrame)
}

// failed writes the error frame and [DONE].
func (c *chunkEncoder) failed(send func([]byte) bool) {
	_ = send(c.errorFrame()) && send(doneFrame)
}

// aborted writes SGLang's abort frame and [DONE].
func (c *chunkEncoder) aborted(message string, send func([]byte) bool) {
	_ = send(c.abortFrame(message)) && send(doneFrame)
}

// tokens is a delta of n tokens starting at token index from, in the reasoning field or in
// content. It is the per-chunk path: appends into the reused buffer, no allocation.
func (c *chunkEncoder) tokens(from, n int, reasoning bool) []byte {
	b := c.begin()
	if reasoning {
		b = append(b, c.reasoningField...)
	} else {
		b = append(b, contentField...)
	}
	b = appendWords(b, c.key, from, n)
	return c.end(append(b, '"'), "")
}

// finish is the last choice frame: an empty delta with the finish reason.
func (c *chunkEncoder) finish(reason string) []byte {
	return c.end(c.begin(), reason)
}

// usage is the frame stream_options.include_usage asks for: no choices, the full usage.
func (c *chunkEncoder) usage(u usage) []byte {
	b := append(c.reset(), c.head...)
	b = append(b, `],"usage":`...)
	b = appendUsage(b, u)
	b = append(b, frameEnd...)
	c.buf = b
	return b
}

// appendUsage appends the OpenAI usage object.
func appendUsage(b []byte, u usage) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Completion), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Prompt+u.Completion), 10)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Cached), 10)
	b = append(b, `},"completion_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Reasoning), 10)
	return append(b, `}}`...)
}

// streamErrorMessage is the message of the in-stream error frame.
const streamErrorMessage = "The generation failed: the engine aborted the request after its stream had begun."

// abortFrame is the in-stream error SGLang sends when its scheduler aborts a request with a
// status (serving_chat.py: "Abort with an explicit error status_code … emit a streaming error
// chunk"): the status's name as type and its code, here a 500.
func (c *chunkEncoder) abortFrame(message string) []byte {
	msg, _ := json.Marshal(message)
	b := append(c.reset(), `data: {"error":{"object":"error","message":`...)
	b = append(b, msg...)
	b = append(b, `,"type":"INTERNAL_SERVER_ERROR","param":null,"code":500}}`...)
	b = append(b, "\n\n"...)
	c.buf = b
	return b
}

// kvFull implements streamEncoder: llama.cpp's frame (kvFullFrame), and no [DONE].
func (c *chunkEncoder) kvFull(send func([]byte) bool) { _ = send(c.kvFullFrame()) }

// kvFullFrame is the in-stream error llama.cpp's server sends each running request when its
// KV cache has no room for a step (engine.StageKVFull): the error object of its error type
// server_error, after which the stream ends without [DONE] (server-context.cpp: "terminate on
// error").
func (c *chunkEncoder) kvFullFrame() []byte {
	b := append(c.reset(), `data: {"error":{"code":500,"message":"`...)
	b = append(b, engine.ContextExceeded...)
	b = append(b, `","type":"server_error"}}`...)
	b = append(b, "\n\n"...)
	c.buf = b
	return b
}

// errorFrame is the in-stream error SGLang sends when a request fails after its stream began,
// the same error object as a body before the stream:
// {"error":{"message","type":"InternalServerError","param":null,"code":503}}.
func (c *chunkEncoder) errorFrame() []byte {
	b := append(c.reset(), `data: {"error":{"message":"`...)
	b = append(b, streamErrorMessage...)
	b = append(b, `","type":"InternalServerError","param":null,"code":503}}`...)
	b = append(b, "\n\n"...)
	c.buf = b
	return b
}
