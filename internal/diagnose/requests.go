package diagnose

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// request is one open request (sent, no terminal event yet).
type request struct {
	id     string
	agent  int
	permit uint64
	sentS  float64
	// ctxTokens is the prompt the request carried, as its request_sent event estimated it.
	ctxTokens int
	// lastByteS is when the request last received a byte (headers or a chunk), or when it
	// was sent while nothing has arrived; chunks counts the chunks received, as samples tell.
	lastByteS float64
	// vagueS, when > 0, is the time of the sample that last bounded lastByteS without naming
	// the request: its latest byte came at lastByteS or later, up to vagueS (see boundAt).
	vagueS float64
	chunks int
	output bool // a reasoning or content token arrived
	// firstByteS is when the first byte (headers or a token) arrived, by the events; 0 before.
	firstByteS float64
	// queuedSeen is set when the server's queued gauge read above 0 while the request had
	// no output token yet: in a sample while it was open, or in the latest sample before it
	// was sent (a gauge reading holds until the next sample).
	queuedSeen bool
	// behindS is how long, in simulated seconds, the harness was behind its schedule during
	// the silence since lastByteS, up to the latest sample (see Analyzer.behind).
	behindS float64
	// simFromS is the embedded simulator's lag when the silence since lastByteS began: 0
	// from the send, else the lag its byte was delivered with (see simLag); simFromPending
	// is set while the sample that measures that byte's lag is still to come.
	simFromS       float64
	simFromPending bool
	// own is the request's own lag in the simulator, as its events and the samples read it;
	// ownFromS its reading when the silence since lastByteS began (0 from the send).
	own      ownLag
	ownFromS float64
	// longest is the longest silence the request has ended so far (a byte came after it), by
	// heardS.
	longest silence
}

// silence is one stretch of time without a byte on a request, in simulated seconds.
type silence struct {
	lengthS, endS float64
	// behindS is how much of it the harness was behind its own schedule (its measured lag):
	// a byte that came then may have waited that long to be read. When the silence ended
	// between two samples, its last stretch (tailS, after the latest sample) is first counted
	// at that sample's lag and then, pending, at the lag the next sample measures over it:
	// baseS is behindS without that stretch.
	behindS, baseS, tailS float64
	pending               bool
	// simS is how much of it the embedded simulator's lag explains: how much later its
	// closing byte came than the one that opened it (simFromS), both against the
	// simulator's model. simPending is set while the sample that measures the closing byte's
	// lag is still to come (see simLag). ownLag says they are its request's own lag, not
	// the simulator's largest.
	simS, simFromS     float64
	simPending, ownLag bool
	// beforeOutput is set when the silence ended before the request's first output token;
	// queued when, besides, the server reported queued work during it. untimed is set when
	// only its length is known (from a terminal event's max_gap_s), not when it happened.
	beforeOutput, queued, untimed bool
}

// heardS is the part of the silence the harness can vouch for: its length less the time the
// harness was behind its schedule during it and less the embedded simulator's lag over it. A
// silence counts as a stall when this reaches StallAfter.
func (s silence) heardS() float64 { return s.lengthS - s.behindS - s.simS }

// byteAt records that a byte arrived on r at t, ending the silence since the last one.
func (a *Analyzer) byteAt(r *request, t float64) {
	if r.vagueS > 0 {
		a.afterBound(r, t)
		return
	}
	if t <= r.lastByteS {
		return
	}
	// The same byte read again from a later sample ("sample time − silence") moves by a
	// rounding error: it does not end the silence since it, nor forget the lag over it.
	if t-r.lastByteS < episodeTolerance {
		r.lastByteS = t
		return
	}
	gap := t - r.lastByteS
	tail := max(0, t-max(a.sampleS, r.lastByteS))
	s := silence{lengthS: gap, endS: t, behindS: a.behind(r, t), baseS: r.behindS, tailS: tail, pending: tail > 0,
		beforeOutput: !r.output, queued: !r.output && (r.queuedSeen || a.queuedNow)}
	a.openSim(&s, r, t)
	if s.heardS() > r.longest.heardS() {
		r.longest = s
	}
	a.openAt(r, t)
}

// openAt makes t the opening of r's silence: its last byte, from which the lags over the
// silence count afresh.
func (a *Analyzer) openAt(r *request, t float64) {
	r.lastByteS = t
	r.behindS = 0
	r.simFromS, r.simFromPending = a.sim.opening(t)
	r.ownFromS = r.own.nowS
	if r.firstByteS == 0 && t-r.sentS < episodeTolerance {
		r.ownFromS = 0 // a silence since the send began with no lag, whatever was read since
	}
}

// boundAt records what a sample at sampleS that does not name r tells of it: its latest byte
// came at t or later (or it was sent then) — a bound shared by every stream the sample leaves
// out, not a byte of its own. A bound ends no silence the harness heard: bytes may have come
// all along up to it. Only a silence since a byte the harness knew exactly ends with it, and
// only as long as the harness knew it: up to the sample before, which named r silent since
// that byte.
func (a *Analyzer) boundAt(r *request, t, sampleS float64) {
	if r.vagueS == 0 && t > r.lastByteS {
		if end := min(a.sampleS, t); end > r.lastByteS {
			a.byteAt(r, end)
		}
	}
	if t > r.lastByteS {
		a.openAt(r, t)
	}
	r.vagueS = sampleS
}

// afterBound takes a byte at t, known exactly, on r whose latest byte only a bound placed
// (boundAt): no silence the harness heard ends at t, since bytes may have come between the
// bound and t. The exact time replaces the bound: a silence goes on from t, or, when t is
// before the bound (a stream the sample names as silent since then), from t still.
func (a *Analyzer) afterBound(r *request, t float64) {
	r.vagueS = 0
	switch {
	case t > r.lastByteS:
		a.openAt(r, t)
	case t < r.lastByteS:
		r.lastByteS = t
	}
}

// openSim credits s, r's silence that a byte at t closes, with the simulator's lag over it:
// r's own when the simulator measures each request's, else the simulator's largest (simLag).
func (a *Analyzer) openSim(s *silence, r *request, t float64) {
	if !a.sim.perRequest {
		a.sim.open(s, r.simFromS, t)
		return
	}
	s.simFromS, s.ownLag = r.ownFromS, true
	s.simS = r.own.credit(r.ownFromS, s.lengthS-s.behindS)
	s.simPending = t > a.sim.atS
}

// simCredit returns how much of r's silence now, of which the harness's lag leaves leftS,
// the simulator's lag explains (see openSim).
func (a *Analyzer) simCredit(r *request, leftS float64) float64 {
	if a.sim.perRequest {
		return r.own.credit(r.ownFromS, leftS)
	}
	return a.sim.credit(r.simFromS, leftS)
}

// behind returns how long the harness was behind its schedule during r's silence up to t, in
// simulated seconds: what the samples inside the silence measured, plus the lag of the latest
// sample (carried until the next one, which measures it afresh) over the stretch since it —
// never more than the silence itself.
func (a *Analyzer) behind(r *request, t float64) float64 {
	since := max(a.sampleS, r.lastByteS)
	return min(r.behindS+min(a.lagNowS, max(0, t-since)), max(0, t-r.lastByteS))
}

// heardSilenceS returns how long r has been silent at nowS, less the time the harness was
// behind its schedule during the silence and less the embedded simulator's lag over it.
func (a *Analyzer) heardSilenceS(r *request, nowS float64) float64 {
	left := r.silenceS(nowS) - a.behind(r, nowS)
	return left - a.simCredit(r, left)
}

// canEnd reports whether an armed timeout of t can still end the request: the whole-request
// and idle timeouts always can, the TTFT timeout only before the first output token.
func canEnd(t workloads.Timeouts, r *request) bool {
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
		a.open[e.Request] = &request{id: e.Request, agent: e.Agent, permit: v.permit, sentS: e.TS, lastByteS: e.TS, queuedSeen: a.queuedNow,
			ctxTokens: e.ContextTokens}
	case e.Kind == events.Headers || e.Kind == events.FirstReasoning || e.Kind == events.FirstContent || e.Kind == events.FirstToolCall:
		if r := a.open[e.Request]; r != nil {
			r.own.read(e.SimLagS)
			a.byteAt(r, e.TS)
			if e.Kind != events.Headers && !r.output {
				a.doing.firstToken(r.ctxTokens, e.TS-r.sentS)
			}
			r.output = r.output || e.Kind != events.Headers
			if r.firstByteS == 0 {
				r.firstByteS = e.TS
			}
		}
		a.progress(e.TS)
	case e.Kind.Terminal():
		a.endRequest(e)
	case e.Kind == events.ToolResult:
		// A tool call that ends frees its agent as a request end does: the time spent in
		// tools is not time without progress.
		a.progress(e.TS)
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
	if e.Kind == events.Done {
		a.doing.done(r.ctxTokens)
	}
	r.own.read(e.SimLagS)
	r.longest.settleOwn(r.own) // its closing byte's own lag is read again at the end
	a.ended++
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
	// A stop's cancellation is the stop mark's to judge; under exec, one before the stop is
	// the harness's own giving up, which ends its silence as any end does.
	byHarness := e.Kind == events.Cancelled && a.exec.on && a.stop == nil
	if e.Kind != events.Cancelled || byHarness {
		a.endSilence(r, e)
	}
	if e.Kind == events.Cancelled && !byHarness {
		a.cut = append(a.cut, e.TS-r.sentS)
		a.readerSaw(r, e)
		a.cancelledSilence(r, e)
	}
}

// readerSaw takes what the stream reader of r measured itself, as its terminal event e
// tells: its last byte (since_last_byte_s ago) and its longest gap between bytes. Samples
// only bound when a byte came; the reader saw each one, so a silence it did not see was not
// one, at a stop as at an end.
func (a *Analyzer) readerSaw(r *request, e events.Event) {
	if e.Chunks == 0 || e.SinceLastByteS <= 0 {
		return
	}
	if t := e.TS - e.SinceLastByteS; t > r.lastByteS {
		r.vagueS = 0
		a.openAt(r, t)
	}
	a.capSilence(r, e)
}

// cancelledSilence keeps, of a request the run's stop cancelled, its longest silence — the
// one it was cancelled in, when longer — if it reached StallAfter: it counts in
// requests.stalled though the verdict judges it by the stop mark, not as a stall that ended.
func (a *Analyzer) cancelledSilence(r *request, e events.Event) {
	s := r.longest
	if a.samples == 0 {
		s = silence{lengthS: max(e.MaxGapS, e.SinceLastByteS), endS: e.TS, untimed: true}
	} else if tail := a.heardSilenceS(r, e.TS); tail > s.heardS() {
		last := max(0, e.TS-max(a.sampleS, r.lastByteS))
		s = silence{lengthS: e.TS - r.lastByteS, endS: e.TS, behindS: a.behind(r, e.TS), baseS: r.behindS, tailS: last, pending: last > 0}
		a.openSim(&s, r, e.TS)
	}
	if s.lengthS >= a.stallS {
		a.stalls = append(a.stalls, pastStall{id: r.id, agent: r.agent, silence: s, ended: e.Kind})
	}
}

// stalledCount returns requests.stalled at nowS: the requests that went StallAfter without a
// byte the harness can vouch for (silence.heardS), ended — their longest silence, or the one
// the run's stop cancelled them in — or open. Queueing and the stop do not matter here: the
// verdict explains those or calls them stalls.
func (a *Analyzer) stalledCount(nowS float64) int {
	n := 0
	for _, p := range a.stalls {
		if p.heardS() >= a.stallS {
			n++
		}
	}
	for _, r := range a.open {
		if r.longest.heardS() >= a.stallS || a.heardSilenceS(r, nowS) >= a.stallS {
			n++
		}
	}
	return n
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
	queued := s.Server[events.Queued] > 0
	if _, ok := s.Server[events.Queued]; ok || s.Server == nil {
		a.queuedNow = queued
	}
	// This sample measures the lag since the previous one: the bytes it reports are judged
	// with it, and so is the stretch of every silence that goes on through it. Its late_s
	// does not count: a sampler late because a /metrics scrape took long says nothing of how
	// late the harness read its streams.
	a.lagNowS = s.LagS
	a.lagMaxS = max(a.lagMaxS, s.LagS, s.SimLagS)
	a.sim.perRequest = a.sim.perRequest || s.SimLagPerRequest
	a.sim.sample(s)
	for _, st := range s.Streams { // each named request's own lag, before what it settles
		if r := a.open[st.Request]; r != nil && s.SimLagPerRequest {
			r.own.read(st.SimLagS)
		}
	}
	a.settle()
	defer a.behindThrough(s.TS)
	for _, st := range s.Streams {
		last := s.TS - st.SinceLastByteS
		if st.SinceLastByteS < st.SentAgoS {
			a.progress(last) // a byte arrived at last; before any byte, last is the send time
		}
		if r := a.open[st.Request]; r != nil {
			a.byteAt(r, last)
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
// received a byte at most the longest silence among the streams not silent ago. The silent
// unnamed ones are each at least the sample's UnlistedSilentSimLagS behind the simulator's
// model: that is their own lag's reading.
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
	// The silent ones are first those sent StallAfter ago that never received a byte by the
	// events (each byte a stream reader hears begins with its headers event), then those
	// silent longest by the Analyzer's account.
	heard := func(r *request) int {
		if r.firstByteS == 0 && r.sentS <= s.TS-o.StallAfterS {
			return 0
		}
		return 1
	}
	slices.SortFunc(unnamed, func(x, y *request) int {
		return cmp.Or(cmp.Compare(heard(x), heard(y)), cmp.Compare(x.lastByteS, y.lastByteS), cmp.Compare(x.agent, y.agent), cmp.Compare(x.id, y.id))
	})
	bound := o.UnlistedMaxSilenceS
	if silent > 0 {
		bound = min(bound, o.NotSilentMaxS)
	}
	for i, r := range unnamed {
		if i < silent {
			r.lastByteS, r.vagueS = min(r.lastByteS, s.TS-o.StallAfterS), 0
			if s.SimLagPerRequest {
				r.own.read(o.UnlistedSilentSimLagS) // a lag each silent unnamed one has at least
			}
			continue
		}
		a.boundAt(r, s.TS-bound, s.TS)
	}
}

// settle counts the last stretch of every silence that ended since the previous sample at
// the lag this sample measured over it (lagNowS), in place of the lag carried from before; then
// the simulator's lag, over what the harness's leaves (settleSim).
func (a *Analyzer) settle() {
	for i := a.settled; i < len(a.stalls); i++ { // only those added since can be pending
		a.stalls[i].settle(a.lagNowS)
	}
	a.settled = len(a.stalls)
	for _, r := range a.open {
		r.longest.settle(a.lagNowS)
	}
	a.settleSim()
}

// settle counts the pending last stretch of s at lagS.
func (s *silence) settle(lagS float64) {
	if s.pending {
		s.behindS = min(s.baseS+min(lagS, s.tailS), s.lengthS)
		s.pending = false
	}
	s.simS = min(s.simS, max(0, s.lengthS-s.behindS))
}

// settleSim takes the simulator's lag just measured (a sample's, or a stop's) for the bytes
// that came since the measure before (see simLag): it raises the credit of the silences they
// closed to it, if more, and lowers the lag of the silences they opened to it, if less.
func (a *Analyzer) settleSim() {
	for i := a.sim.settled; i < len(a.stalls); i++ { // only those added since can be pending
		a.stalls[i].settleSim(&a.sim)
	}
	a.sim.settled = len(a.stalls)
	for _, r := range a.open {
		r.longest.settleOwn(r.own)
		r.longest.settleSim(&a.sim)
		if r.simFromPending {
			r.simFromS, r.simFromPending = min(r.simFromS, a.sim.nowS), false
		}
	}
	a.sim.settle()
}

// settleSim raises the simulator's credit of s, when its closing byte's lag was pending, to
// what the latest measure gives.
func (s *silence) settleSim(sim *simLag) {
	if s.simPending && !s.ownLag {
		s.simS = max(s.simS, sim.credit(s.simFromS, s.lengthS-s.behindS))
		s.simPending = false
	}
}

// settleOwn raises the credit of s, when it is its request's own lag and its closing byte's
// was pending, to what the request's latest readings give (see openSim).
func (s *silence) settleOwn(own ownLag) {
	if s.simPending && s.ownLag {
		s.simS = max(s.simS, own.credit(s.simFromS, s.lengthS-s.behindS))
		s.simPending = false
	}
}

// behindThrough adds, to every silence still going on at the sample at tS, the lag that
// sample measured over the stretch of the silence since the previous sample.
func (a *Analyzer) behindThrough(tS float64) {
	for _, r := range a.open {
		r.behindS = a.behind(r, tS)
	}
	a.sampleS = tS
}

// progress records that a byte flowed, a request ended or a tool call ended at t.
func (a *Analyzer) progress(t float64) {
	if t > a.lastProgressS {
		a.lastProgressS = t
		a.sim.progressS, a.sim.progressPending = a.sim.opening(t)
	}
}

// quietS returns how long nothing has moved at nowS — no byte, no request end — less the
// embedded simulator's lag over that time: with the simulator behind its model, the next
// byte could not have come sooner.
func (a *Analyzer) quietS(nowS float64) float64 {
	q := nowS - a.lastProgressS
	if !a.sim.perRequest {
		return q - a.sim.credit(a.sim.progressS, q)
	}
	// Each request's own: the next byte could not have come sooner than the one of the open
	// requests the simulator is most behind on would have.
	most := 0.0
	for _, r := range a.open {
		most = max(most, a.simCredit(r, q))
	}
	return q - most
}
