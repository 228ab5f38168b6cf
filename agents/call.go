package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/freshstack"
	"github.com/agentsim/agentsim/workloads"
)

// call is the state of one Client.Call. Only the goroutine running Call touches it, except
// the silence timer, which has its own synchronisation.
type call struct {
	clk   *clock.Clock
	obs   Observer
	res   *Result // the caller's, filled as the request goes
	timer silenceTimer

	cancelTimer context.CancelCauseFunc
	streaming   bool          // 2xx headers arrived
	contentType string        // of the 2xx response
	body        io.ReadCloser // of the 2xx response
	token       bool          // a token of either kind arrived

	f       frame
	content strings.Builder
	// tools are the reply's tool calls as their deltas arrive; toolProblem says why a delta
	// could be applied to none.
	tools       []toolBuild
	toolProblem string
	// rf and callItems are a Responses stream's: its latest event (allocated for such a
	// stream only: a chat stream's agents keep the call's frame on their stacks), and the tool
	// call each output index opened (-1: none).
	rf        *rframe
	callItems []int
	scratch   []byte // decoded text of escaped deltas, reused
}

// contexts derives the call's context from parent: a cause-carrying cancel for the timer that
// enforces the timeouts (silenceTimer), the response hook and the extra body fields.
func (k *call) contexts(parent context.Context, req *Request) (context.Context, context.CancelFunc) {
	ctx, cancelTimer := context.WithCancelCause(parent)
	k.cancelTimer = cancelTimer
	ctx = withResponseHook(ctx, k.onResponse)
	if req.IgnoreEOS {
		ctx = withBodyFields(ctx, ignoreEOS)
	}
	return ctx, func() { cancelTimer(nil) }
}

// run sends the request and reads the stream; the error is classified by finish.
func (k *call) run(ctx context.Context, api *openai.Client, req *Request, wired bool) (err error) {
	k.res.Sent = k.clk.Now()
	k.timer.start(k.clk, k.res.Sent, req.Timeouts, k.cancelTimer)
	defer k.timer.stop()
	// go-openai sends the request and reads error responses; the stream itself is read from
	// the body the response hook kept (go-openai's own reader matches two regular expressions
	// per line), which go-openai's stream would close on Close.
	// Encoding the request takes a deep stack and the stream is then read for minutes:
	// thousands of agents would each keep the deep one (internal/freshstack).
	responses := req.API == workloads.APIResponses
	freshstack.Run(func() {
		if responses {
			_, err = api.CreateResponseStream(ctx, req.responseRequest(wired))
		} else {
			_, err = api.CreateChatCompletionStream(ctx, req.chatRequest(wired))
		}
	})
	if err != nil {
		return err
	}
	if k.body == nil {
		return errStreamHook
	}
	defer func() { closeBody(k.body, err == nil) }()
	st := newSSEReader(k.body, maxNonDataLines)
	defer st.release()
	if responses {
		st.events = true
		return k.readResponses(st)
	}
	return k.read(st)
}

// drainLimit bounds what closeBody reads of a body after its stream's end, in bytes.
const drainLimit = 4 << 10

// closeBody closes a stream's body. After the stream's end (ended) it reads the body to its
// own end first, as the OpenAI SDKs consume the whole stream: the server ends the body right
// after its last event, and a body read to its end leaves the connection to the next request,
// as a real client's does. Before the end, Close drops the connection: the server sees the
// disconnect.
func closeBody(body io.ReadCloser, ended bool) {
	if ended {
		_, _ = io.CopyN(io.Discard, body, drainLimit)
	}
	_ = body.Close()
}

// onResponse records the response headers; go-openai drops them for error statuses.
func (k *call) onResponse(resp *http.Response) {
	now := k.clk.Now()
	k.res.Headers, k.res.Status = now, resp.StatusCode
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		k.res.RetryAfter, _ = parseRetryAfter(resp.Header, now)
	}
	if resp.StatusCode/100 == 2 {
		k.streaming = true
		k.contentType = resp.Header.Get("Content-Type")
		k.body = resp.Body
	}
	k.obs.Headers(now)
}

// read consumes data frames until [DONE] or an error.
func (k *call) read(st *sseReader) error {
	for {
		line, err := st.next()
		now := k.clk.Now()
		if err != nil {
			return k.ended(st, err, now)
		}
		k.tick(now)
		if err := k.frame(line, now); err != nil {
			return err
		}
	}
}

// ended turns the error that ended the stream into the call's error: nil after [DONE].
func (k *call) ended(st *sseReader, err error, now time.Time) error {
	if !errors.Is(err, io.EOF) {
		return err
	}
	if st.sawDone() {
		k.tick(now)
		return nil
	}
	if k.res.Chunks == 0 && !isEventStream(k.contentType) {
		return fmt.Errorf("%w (Content-Type %q)", errNotEventStream, k.contentType)
	}
	return fmt.Errorf("stream ended before data: [DONE]: %w", io.ErrUnexpectedEOF)
}

// tick accounts for a data frame arriving at now.
func (k *call) tick(now time.Time) {
	if k.res.Chunks > 0 {
		k.res.MaxGap = max(k.res.MaxGap, now.Sub(k.res.Last))
	}
	k.res.Chunks++
	k.res.Last = now
	k.timer.chunk(now)
	k.obs.Chunk(now)
}

// frame applies one data line to the result.
func (k *call) frame(line []byte, now time.Time) error {
	f := &k.f
	if !scanFrame(line, f) {
		if err := k.decode(line); err != nil {
			return err
		}
	}
	if f.isError() {
		return frameError(line)
	}
	r := f.reasoningText()
	if len(r.raw) > 0 {
		k.reasoningDelta(r, now)
	}
	if len(f.content.raw) > 0 {
		k.contentDelta(f.content, now)
	}
	if len(f.tools) > 0 {
		k.toolCallDeltas(f, now)
	}
	if len(r.raw) > 0 || len(f.content.raw) > 0 || len(f.tools) > 0 {
		k.res.TokenChunks++
	}
	if f.finish.set && !f.finish.equals(string(k.res.FinishReason)) {
		k.res.FinishReason = events.FinishReason(f.finish.appendTo(nil))
	}
	if f.role.set && k.res.Role == "" {
		k.res.Role = string(f.role.appendTo(nil))
	}
	if f.hasUsage {
		k.res.Usage = f.usage
	}
	return nil
}

// decode decodes a data line the scanner does not take into k.f. It is a call of its own, not
// inlined into frame: the decoded frame's temporary would otherwise sit in frame's stack frame,
// which every data line of every stream goes through (docs/speed.md).
//
//go:noinline
func (k *call) decode(line []byte) error {
	var err error
	if k.f, err = decodeFrame(line); err != nil {
		return fmt.Errorf("data line %s: %w", quoteShort(line), err)
	}
	return nil
}

// reasoningDelta counts a reasoning delta; the text itself is not kept.
func (k *call) reasoningDelta(r jstr, now time.Time) {
	n := len(r.raw)
	if r.esc {
		k.scratch = r.appendTo(k.scratch[:0])
		n = utf8.RuneCount(k.scratch)
	}
	k.res.ReasoningChars += n
	if k.res.FirstReasoning.IsZero() {
		k.res.FirstReasoning = now
		k.firstToken(now)
		k.obs.FirstReasoning(now)
	}
}

// contentDelta appends a content delta to the content text.
func (k *call) contentDelta(c jstr, now time.Time) {
	n := len(c.raw)
	if c.esc {
		k.scratch = c.appendTo(k.scratch[:0])
		n = utf8.RuneCount(k.scratch)
		k.content.Write(k.scratch)
	} else {
		k.content.Write(c.raw)
	}
	k.res.ContentChars += n
	if k.res.FirstContent.IsZero() {
		k.res.FirstContent = now
		k.res.TTFTContent = now.Sub(k.res.Sent)
		k.firstToken(now)
		k.obs.FirstContent(now)
	}
}

// toolCallDeltas applies a frame's tool-call deltas; the first is the reply's first token when
// no reasoning or content came before it.
func (k *call) toolCallDeltas(f *frame, now time.Time) {
	for i := range f.tools {
		k.toolDelta(&f.tools[i])
	}
	if k.res.FirstToolCall.IsZero() {
		k.res.FirstToolCall = now
		k.firstToken(now)
		k.obs.FirstToolCall(now)
	}
}

// firstToken records the first token of any kind.
func (k *call) firstToken(now time.Time) {
	if !k.token {
		k.token = true
		k.res.TTFT = now.Sub(k.res.Sent)
		k.res.FirstTokenChunk = k.res.Chunks // tick counted this frame already
		k.timer.gotToken()
	}
}

// finish stamps the end and names the failure: the caller's cancellation first, then the
// timeout that cancelled the call, then the error's type.
func (k *call) finish(parent, ctx context.Context, err error) {
	k.res.End = k.clk.Now()
	k.res.Content = k.content.String()
	if err == nil {
		err = k.assembleTools()
	}
	if err == nil {
		return
	}
	k.res.Err = err
	cause := context.Cause(ctx)
	switch {
	case parent.Err() != nil:
		k.res.Class = events.ClassCancelled
		k.res.Err = fmt.Errorf("call cancelled: %w", context.Cause(parent))
	case errors.Is(cause, ErrTTFTTimeout):
		k.res.Class, k.res.Timeout, k.res.Err = events.ClassTimeoutTTFT, TimeoutTTFT, cause
	case errors.Is(cause, ErrIdleTimeout):
		k.res.Class, k.res.Timeout, k.res.Err = events.ClassTimeoutIdle, TimeoutIdle, cause
	case errors.Is(cause, ErrRequestTimeout):
		k.res.Class, k.res.Timeout, k.res.Err = events.ClassTimeoutRequest, TimeoutRequest, cause
	default:
		k.res.Class = classify(err, k.streaming)
	}
}

// frameError builds the error of an in-stream error frame that go-openai passed through: one
// whose "error" member is not first, or an older {"object":"error","message":…} frame.
func frameError(line []byte) error {
	var wrapped struct {
		Error *openai.APIError `json:"error"`
	}
	if json.Unmarshal(line, &wrapped) == nil && wrapped.Error != nil {
		return fmt.Errorf("error frame: %w", wrapped.Error)
	}
	apiErr := &openai.APIError{}
	if json.Unmarshal(line, apiErr) != nil || apiErr.Message == "" {
		apiErr = &openai.APIError{Message: quoteShort(line)}
	}
	return fmt.Errorf("error frame: %w", apiErr)
}

// isEventStream reports whether a Content-Type header is text/event-stream.
func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}

// quoteShort quotes the start of a line for an error message.
func quoteShort(line []byte) string {
	const limit = 120
	if len(line) > limit {
		return fmt.Sprintf("%q…", line[:limit])
	}
	return fmt.Sprintf("%q", line)
}
