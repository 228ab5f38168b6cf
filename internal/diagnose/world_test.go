package diagnose

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/agentsim/agentsim/events"
)

// This file is a tiny synthetic harness for the tests: agents follow scripted timelines
// (read, wait in the pacer, stream a request, think…), and the world turns them into the
// events.jsonl records and the samples.jsonl records a real run would write.

var inf = math.Inf(1)

// world is one scripted run.
type world struct {
	slots      int
	events     []events.Event
	phases     [][]phase // per agent, in time order
	reqs       []*wreq
	permits    []*wpermit
	gauges     func(t float64) map[string]float64 // server gauges at t; nil: none
	nextPermit uint64
}

// phase is an agent state over [from, to).
type phase struct {
	state    events.State
	from, to float64
}

// wreq is one request's byte timeline: headers at headers, output chunks at rate per second
// from first until bytesUntil, the terminal event at end (inf: never).
type wreq struct {
	id                               string
	agent                            int
	permit                           uint64
	sent, headers, first, bytesUntil float64
	end, rate                        float64
	tokens                           int
}

// wpermit is one pacer permit: held from from to to (inf: still held), leaked at leakedAt
// (inf: never).
type wpermit struct {
	id                 uint64
	agent              int
	from, to, leakedAt float64
}

func newWorld(agents, slots int) *world {
	return &world{slots: slots, phases: make([][]phase, agents)}
}

// actor scripts one agent's timeline from time t on.
type actor struct {
	w       *world
	id      int
	t       float64
	rnd     int // the current round
	attempt int // the next request attempt of the round
	permit  *wpermit
}

// agent starts agent id's script: agent_start at 0, start jitter until start.
func (w *world) agent(id int, start float64) *actor {
	a := &actor{w: w, id: id}
	a.emit(events.Event{Kind: events.AgentStart})
	a.phase(events.StateStarting, start)
	return a
}

func (a *actor) emit(e events.Event) {
	e.TS, e.Agent = a.t, a.id
	if e.Round == 0 {
		e.Round = a.rnd
	}
	a.w.events = append(a.w.events, e)
}

// phase puts the agent in state for d seconds (inf: for ever) and advances its time.
func (a *actor) phase(state events.State, d float64) {
	if d > 0 {
		a.w.phases[a.id] = append(a.w.phases[a.id], phase{state: state, from: a.t, to: a.t + d})
	}
	a.t += d
}

// read starts a round with d seconds of tool time.
func (a *actor) read(d float64) *actor {
	a.rnd++
	a.attempt = 0
	a.emit(events.Event{Kind: events.RoundStart})
	a.phase(events.StateReading, d)
	a.emit(events.Event{Kind: events.ReadDone, ReadTokens: 1000})
	return a
}

// wait waits d seconds in the pacer (inf: for ever), then takes a permit.
func (a *actor) wait(d float64) *actor {
	a.emit(events.Event{Kind: events.PacerWait})
	a.phase(events.StatePacerWait, d)
	if math.IsInf(d, 1) {
		return a
	}
	a.w.nextPermit++
	a.permit = &wpermit{id: a.w.nextPermit, agent: a.id, from: a.t, to: inf, leakedAt: inf}
	a.w.permits = append(a.w.permits, a.permit)
	a.emit(events.Event{Kind: events.PacerAcquired, Permit: a.permit.id, PacerWaitS: d})
	return a
}

// call is one request attempt's script, in seconds from its send.
type call struct {
	dur    float64 // to the terminal event; inf: never ends
	ttft   float64 // to the first output token; inf: none
	silent float64 // bytes stop here (a wedge); 0: they flow until dur
	tokens int
	kind   events.Kind // terminal kind; Done when empty
	class  events.Class
	status int
}

// call sends one request attempt and scripts its events.
func (a *actor) call(c call) *actor {
	attempt := a.attempt
	a.attempt++
	r := &wreq{id: fmt.Sprintf("a%d-r%d-%d", a.id, a.rnd, attempt), agent: a.id, sent: a.t,
		headers: a.t + min(0.05, c.dur), first: a.t + c.ttft, end: a.t + c.dur, rate: 20, tokens: c.tokens}
	r.bytesUntil = r.end
	if c.silent > 0 {
		r.bytesUntil = a.t + c.silent
	}
	if a.permit != nil {
		r.permit = a.permit.id
	}
	a.w.reqs = append(a.w.reqs, r)
	a.emit(events.Event{Kind: events.RequestSent, Request: r.id, Attempt: attempt, ContextTokens: 20000})
	a.at(r.headers, events.Event{Kind: events.Headers, Request: r.id})
	a.at(r.first, events.Event{Kind: events.FirstReasoning, Request: r.id})
	a.phase(events.StateRequesting, c.dur)
	if !math.IsInf(c.dur, 1) {
		e := terminal(c, r)
		e.Attempt = attempt
		a.emit(e)
	}
	return a
}

// at emits e at t when t comes before the agent's current phase ends (finite).
func (a *actor) at(t float64, e events.Event) {
	if math.IsInf(t, 1) {
		return
	}
	saved := a.t
	a.t = t
	a.emit(e)
	a.t = saved
}

// terminal is the event that ends r as c says.
func terminal(c call, r *wreq) events.Event {
	e := events.Event{Kind: cmp.Or(c.kind, events.Done), Request: r.id, LatencyS: c.dur,
		Class: c.class, Status: c.status, SinceLastByteS: r.end - min(r.end, r.bytesUntil)}
	if e.Kind == events.Done {
		e.TTFTS, e.CompletionTokens, e.ReasoningTokens = c.ttft, c.tokens, c.tokens/2
	}
	return e
}

// backoff waits d seconds before a retry, keeping the permit.
func (a *actor) backoff(d float64) *actor {
	a.emit(events.Event{Kind: events.Retry, BackoffS: d})
	a.phase(events.StateBackoff, d)
	return a
}

// release returns the permit, or leaks it.
func (a *actor) release(leaked bool) *actor {
	if a.permit != nil {
		a.emit(events.Event{Kind: events.Release, Permit: a.permit.id, Leaked: leaked})
		if leaked {
			a.permit.leakedAt = a.t
		} else {
			a.permit.to = a.t
		}
		a.permit = nil
	}
	return a
}

// tools runs the reply's tool calls for d seconds, one tool_call and one tool_result.
func (a *actor) tools(d float64) *actor {
	req := fmt.Sprintf("a%d-r%d-%d", a.id, a.rnd, max(0, a.attempt-1))
	a.emit(events.Event{Kind: events.ToolCall, Request: req, Tool: "read", ToolCallID: "call_1"})
	a.phase(events.StateTool, d)
	a.emit(events.Event{Kind: events.ToolResult, Request: req, Tool: "read", ToolCallID: "call_1", LatencyS: d, ResultTokens: 100})
	return a
}

// roundDone ends the round and thinks for d seconds.
func (a *actor) roundDone(ok bool, think float64) *actor {
	outcome := events.RoundFailed
	if ok {
		outcome = events.RoundOK
	}
	a.emit(events.Event{Kind: events.RoundDone, Outcome: outcome})
	a.phase(events.StateThinking, think)
	return a
}

// round is a whole successful round: read, wait, one request, release, think.
func (a *actor) round(read, wait float64, c call, think float64) *actor {
	return a.read(read).wait(wait).call(c).release(false).roundDone(true, think)
}

// done ends the agent.
func (a *actor) done() {
	a.emit(events.Event{Kind: events.AgentDone})
	a.phase(events.StateDone, inf)
}

// sorted returns the events in time order (stable: script order at equal times).
func (w *world) sorted() []events.Event {
	evs := slices.Clone(w.events)
	slices.SortStableFunc(evs, func(x, y events.Event) int { return cmp.Compare(x.TS, y.TS) })
	return evs
}

// samples returns a sample every 0.75 s up to and including until.
func (w *world) samples(until float64) []events.Sample {
	var out []events.Sample
	for i := 1; float64(i)*0.75 <= until+1e-9; i++ {
		out = append(out, w.sample(float64(i)*0.75))
	}
	return out
}

// sample is what the harness would record at t.
func (w *world) sample(t float64) events.Sample {
	s := events.Sample{TS: t, Agents: map[events.State]int{}}
	if w.gauges != nil {
		s.Server = w.gauges(t)
	}
	for _, r := range w.reqs {
		s.ChunksIn += int64(r.chunks(min(t, r.end)))
		if r.end <= t {
			s.TokensOut += int64(r.tokens)
			continue
		}
		if r.sent > t {
			continue
		}
		last := r.lastByte(t)
		s.Streams = append(s.Streams, events.Stream{Request: r.id, Agent: r.agent, Permit: r.permit,
			SentAgoS: t - r.sent, SinceLastByteS: t - last, Chunks: r.chunks(t)})
		s.OldestSilenceS = max(s.OldestSilenceS, t-last)
	}
	s.InFlight = len(s.Streams)
	s.Pacer = w.pacer(t)
	for id := range w.phases {
		st := w.state(id, t)
		s.Agents[st.state]++
		if st.state == events.StatePacerWait {
			s.Pacer.Waiters = append(s.Pacer.Waiters, events.Waiter{Agent: id, WaitS: t - st.from})
		}
	}
	s.Pacer.Waiting = len(s.Pacer.Waiters)
	return s
}

// lastByte is when r last received a byte at t (its send time before any).
func (r *wreq) lastByte(t float64) float64 {
	switch {
	case t < r.headers:
		return r.sent
	case t < r.first:
		return r.headers
	}
	return min(t, r.bytesUntil)
}

// chunks is how many output chunks r has received by t.
func (r *wreq) chunks(t float64) int {
	if t < r.first {
		return 0
	}
	return int((min(t, r.bytesUntil) - r.first) * r.rate)
}

// pacer is the pacer's state at t.
func (w *world) pacer(t float64) *events.PacerSample {
	p := &events.PacerSample{Limit: w.slots}
	for _, h := range w.permits {
		if h.from > t {
			continue
		}
		p.Acquired++
		if h.to <= t {
			p.Released++
			continue
		}
		p.InUse++
		p.Held = append(p.Held, events.Holding{Permit: h.id, Agent: h.agent, HeldS: t - h.from, Leaked: h.leakedAt <= t})
	}
	return p
}

// state is agent id's phase at t; after its script ends it is busy.
func (w *world) state(id int, t float64) phase {
	for _, p := range w.phases[id] {
		if p.from <= t && t < p.to {
			return p
		}
	}
	return phase{state: stateBusy, from: t, to: t}
}

// decodeRunning returns server gauges with decode_running = v(t).
func decodeRunning(v func(t float64) float64) func(t float64) map[string]float64 {
	return func(t float64) map[string]float64 {
		return map[string]float64{events.DecodeRunning: v(t), events.PrefillInflight: 0}
	}
}

// feed replays the world's records up to until into a new Analyzer for cfg.
func (w *world) feed(cfg Config, until float64) *Analyzer {
	a := New(cfg)
	var evs []events.Event
	for _, e := range w.sorted() {
		if e.TS <= until {
			evs = append(evs, e)
		}
	}
	Replay(a, evs, w.samples(until))
	return a
}
