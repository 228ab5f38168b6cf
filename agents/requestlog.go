package agents

import (
	"time"

	"github.com/agentsim/agentsim/events"
)

// Tap receives a request as it ends: the agent that sent it, its result and the arrival of each
// of its data frames ([DONE] included), in simulated time. It is called on the agent's
// goroutine, after the request's terminal event is recorded.
type Tap func(agent int, res Result, frames []time.Time)

// requestLog records a request's milestones as events and keeps its board stream's last-byte
// time current; Chunk is on the per-chunk path and only touches atomics, and keeps the
// frames' arrival times only for a Tap.
type requestLog struct {
	a          *Agent
	round      int
	id         string
	stream     *Stream
	keepFrames bool
	frames     []time.Time
}

func (o *requestLog) Headers(t time.Time) {
	o.stream.Byte(t)
	o.a.record(&events.Event{Kind: events.Headers, Round: o.round, Request: o.id})
}

func (o *requestLog) FirstReasoning(time.Time) {
	o.a.record(&events.Event{Kind: events.FirstReasoning, Round: o.round, Request: o.id})
}

func (o *requestLog) FirstContent(time.Time) {
	o.a.record(&events.Event{Kind: events.FirstContent, Round: o.round, Request: o.id})
}

func (o *requestLog) FirstToolCall(time.Time) {
	o.a.record(&events.Event{Kind: events.FirstToolCall, Round: o.round, Request: o.id})
}

func (o *requestLog) Chunk(t time.Time) {
	o.stream.Chunk(t)
	if o.keepFrames {
		o.frames = append(o.frames, t)
	}
}

// terminalEvent sets e, a zero event, to the one event that ends a request. Both go by
// reference: a request ends with every agent's stack at its deepest, and a Result and an event
// by value would take an agent past its 4 KiB stack (docs/speed.md).
func terminalEvent(e *events.Event, r *Result, round int, id string, attempt int) {
	e.Round, e.Request, e.Attempt = round, id, attempt
	e.LatencyS, e.Chunks, e.TokenChunks, e.MaxGapS = r.End.Sub(r.Sent).Seconds(), r.Chunks, r.TokenChunks, r.MaxGap.Seconds()
	e.PromptTokens, e.CompletionTokens = r.Usage.Prompt, r.Usage.Completion
	e.ReasoningTokens, e.CachedTokens = r.Usage.Reasoning, r.Usage.Cached
	if !r.Last.IsZero() {
		e.SinceLastByteS = r.End.Sub(r.Last).Seconds()
	} else {
		e.SinceLastByteS = e.LatencyS
	}
	e.Kind = r.Class.Outcome().Kind()
	if e.Kind == events.Done {
		e.FinishReason = r.FinishReason
		e.TTFTS, e.TTFTContentS = r.TTFT.Seconds(), r.TTFTContent.Seconds()
		e.ITLS = r.ITL().Seconds()
		e.ContentTokens = r.Usage.Completion - r.Usage.Reasoning
		return
	}
	e.Class, e.Status, e.Message = r.Class, r.Status, errorMessage(r.Err)
	e.RetryAfterS = r.RetryAfter.Seconds()
}
