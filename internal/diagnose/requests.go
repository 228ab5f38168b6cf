package diagnose

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/scrape"
	"github.com/agentsim/agentsim/policy"
	"github.com/agentsim/agentsim/results"
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
	// queuedSeen is set when a sample found the server reporting queued work while the
	// request had no output token yet.
	queuedSeen bool
	// longest is the longest silence the request has ended so far (a byte came after it).
	longest silence
}

// silence is one stretch of time without a byte on a request, in simulated seconds.
type silence struct {
	lengthS, endS float64
	// beforeOutput is set when the silence ended before the request's first output token;
	// queued when, besides, the server reported queued work during it. untimed is set when
	// only its length is known (from a terminal event's max_gap_s), not when it happened.
	beforeOutput, queued, untimed bool
}

// byteAt records that a byte arrived at t, ending the silence since the last one.
func (r *request) byteAt(t float64) {
	if t <= r.lastByteS {
		return
	}
	if gap := t - r.lastByteS; gap > r.longest.lengthS {
		r.longest = silence{lengthS: gap, endS: t, beforeOutput: !r.output, queued: !r.output && r.queuedSeen}
	}
	r.lastByteS = t
}

// canEnd reports whether an armed timeout of t can still end the request: the whole-request
// and idle timeouts always can, the TTFT timeout only before the first output token.
func canEnd(t policy.Timeouts, r *request) bool {
	return t.Request > 0 || t.Idle > 0 || (t.TTFT > 0 && !r.output)
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
		a.retried(e)
		v := a.agent(e.Agent)
		if e.Attempt == 0 {
			v.roundsSent++
		}
		v.request = e.Request
		a.sent++
		a.open[e.Request] = &request{id: e.Request, agent: e.Agent, permit: v.permit, sentS: e.TS, lastByteS: e.TS}
	case e.Kind == events.Headers || e.Kind == events.FirstReasoning || e.Kind == events.FirstContent:
		if r := a.open[e.Request]; r != nil {
			r.byteAt(e.TS)
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
	a.onChunks(e)
	a.busyS += e.TS - r.sentS
	v := a.agent(r.agent)
	if v.request == r.id {
		v.request = ""
	}
	v.failed = ""
	if e.Kind == events.Error || e.Kind == events.Timeout {
		v.failed = results.FailureKey(e)
		a.failures[v.failed]++
	}
	if e.Kind != events.Cancelled { // a stop's cancellation is the stop mark's to judge
		a.endSilence(r, e)
	}
}

// retried notes a request attempt being sent: a failed attempt of the agent before it no
// longer counts as the request's failure when this one is its retry, only as a retry.
func (a *Analyzer) retried(e events.Event) {
	v := a.agent(e.Agent)
	if e.Attempt > 0 && v.failed != "" {
		if a.failures[v.failed]--; a.failures[v.failed] <= 0 {
			delete(a.failures, v.failed)
		}
	}
	v.failed = ""
}

// onStreams updates the open requests from a sample's view of the streams: when each last
// received a byte and how many chunks it has. A stream the events do not know yet is left to
// the invariant check: its request_sent event may simply be on its way.
func (a *Analyzer) onStreams(s events.Sample) {
	queued := s.Server[scrape.Queued] > 0
	for _, st := range s.Streams {
		last := s.TS - st.SinceLastByteS
		if st.SinceLastByteS < st.SentAgoS {
			a.progress(last) // a byte arrived at last; before any byte, last is the send time
		}
		if r := a.open[st.Request]; r != nil {
			r.byteAt(last)
			r.chunks = max(r.chunks, st.Chunks)
			r.queuedSeen = r.queuedSeen || (!r.output && queued)
		}
	}
	a.onUnlisted(s, queued)
	if s.Streams == nil && s.ChunksIn > a.chunksIn {
		a.progress(s.TS) // no per-stream view: chunks moved since the last sample
	}
	a.chunksIn = max(a.chunksIn, s.ChunksIn)
}

// onUnlisted updates the open requests a sample does not name, when it names only the
// longest silences (events.OpenStreams). The latest byte on any stream is progress. When more
// streams are silent ≥ StallAfter than the sample names, the unnamed requests that have been
// silent longest by the Analyzer's account make up the count; every other unnamed request
// received a byte at most the longest silence among the streams not silent ago.
func (a *Analyzer) onUnlisted(s events.Sample, queued bool) {
	o := s.Open
	if o == nil || len(s.Streams) >= s.InFlight {
		return
	}
	if o.WithBytes > 0 {
		a.progress(s.TS - o.LastByteAgoS)
	}
	named := make(map[string]bool, len(s.Streams))
	silent := o.Silent
	for _, st := range s.Streams {
		named[st.Request] = true
		if st.SinceLastByteS >= o.StallAfterS {
			silent--
		}
	}
	var unnamed []*request
	for _, r := range a.open {
		if !named[r.id] {
			unnamed = append(unnamed, r)
			r.queuedSeen = r.queuedSeen || (!r.output && queued)
		}
	}
	slices.SortFunc(unnamed, func(x, y *request) int {
		return cmp.Or(cmp.Compare(x.lastByteS, y.lastByteS), cmp.Compare(x.agent, y.agent), cmp.Compare(x.id, y.id))
	})
	bound := o.UnlistedMaxSilenceS
	if silent > 0 {
		bound = min(bound, o.NotSilentMaxS)
	}
	for i, r := range unnamed {
		if i < silent {
			r.lastByteS = min(r.lastByteS, s.TS-o.StallAfterS)
			continue
		}
		r.byteAt(s.TS - bound)
	}
}

// progress records that a byte flowed or a request ended at t.
func (a *Analyzer) progress(t float64) { a.lastProgressS = max(a.lastProgressS, t) }
