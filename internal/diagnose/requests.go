package diagnose

import (
	"fmt"

	"github.com/agentsim/agentsim/events"
)

// request is one open request (sent, no terminal event yet).
type request struct {
	id     string
	agent  int
	permit uint64
	sentS  float64
	// lastByteS is when the request last received a byte (headers or a chunk), or when it
	// was sent while nothing has arrived; chunks counts the chunks received, as samples tell.
	lastByteS float64
	chunks    int
	output    bool // a reasoning or content token arrived
}

// queued reports whether the request has received no output token yet: it waits in the
// server's queue or prefill. Chunks do not tell: servers send the role chunk (and the harness
// counts it) as soon as they admit a request, long before its first token.
func (r *request) queued() bool { return !r.output }

// silenceS returns how long the request has gone without a byte at nowS, in seconds.
func (r *request) silenceS(nowS float64) float64 { return nowS - r.lastByteS }

// onRequestEvent tracks the open requests through request_sent, the first-byte events and the
// terminal event.
func (a *Analyzer) onRequestEvent(e events.Event) {
	switch {
	case e.Kind == events.RequestSent:
		v := a.agent(e.Agent)
		v.request = e.Request
		a.sent++
		a.open[e.Request] = &request{id: e.Request, agent: e.Agent, permit: v.permit, sentS: e.TS, lastByteS: e.TS}
	case e.Kind == events.Headers || e.Kind == events.FirstReasoning || e.Kind == events.FirstContent:
		if r := a.open[e.Request]; r != nil {
			r.lastByteS = max(r.lastByteS, e.TS)
			r.output = r.output || e.Kind != events.Headers
		}
		a.progress(e.TS)
	case e.Kind.Terminal():
		a.endRequest(e)
	}
}

// endRequest closes a request on its terminal event: it counts as progress, whatever the
// outcome, since it frees its agent.
func (a *Analyzer) endRequest(e events.Event) {
	a.progress(e.TS)
	r := a.open[e.Request]
	if r == nil {
		a.inv.strayTerminal(fmt.Sprintf("%s event at t=%s for request %s, which was not in flight",
			e.Kind, secs(e.TS), e.Request))
		return
	}
	delete(a.open, e.Request)
	a.ended++
	a.busyS += e.TS - r.sentS
	if v := a.agent(r.agent); v.request == r.id {
		v.request = ""
	}
	if e.Kind == events.Error || e.Kind == events.Timeout {
		a.failures[failureKey(e)]++
	}
}

// failureKey names a failed request's class and status, as "http_status 429" or
// "timeout_idle".
func failureKey(e events.Event) string {
	class := e.Class
	if class == "" {
		class = string(e.Kind)
	}
	if e.Status >= 300 { // a failure after 200 headers (timeout, error frame) says nothing by its status
		return fmt.Sprintf("%s %d", class, e.Status)
	}
	return class
}

// onStreams updates the open requests from a sample's view of the streams: when each last
// received a byte and how many chunks it has. A stream the events do not know yet is left to
// the invariant check: its request_sent event may simply be on its way.
func (a *Analyzer) onStreams(s events.Sample) {
	for _, st := range s.Streams {
		last := s.TS - st.SinceLastByteS
		if st.SinceLastByteS < st.SentAgoS {
			a.progress(last) // a byte arrived at last; before any byte, last is the send time
		}
		if r := a.open[st.Request]; r != nil {
			r.lastByteS = max(r.lastByteS, last)
			r.chunks = max(r.chunks, st.Chunks)
		}
	}
	if s.Streams == nil && s.ChunksIn > a.chunksIn {
		a.progress(s.TS) // no per-stream view: chunks moved since the last sample
	}
	a.chunksIn = max(a.chunksIn, s.ChunksIn)
}

// progress records that a byte flowed or a request ended at t.
func (a *Analyzer) progress(t float64) { a.lastProgressS = max(a.lastProgressS, t) }
