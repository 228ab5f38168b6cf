package report

import (
	"sort"

	"github.com/agentsim/agentsim/events"
)

// Phase is what a request (or its agent, before it) is doing during a span of the Gantt chart.
type Phase int

// The phases, in drawing order: a later phase is drawn over an earlier one where they overlap,
// and wins when an aggregate lane counts what an agent is doing.
const (
	PhasePacerWait Phase = iota // waiting in the pacer for a permit
	PhaseTool                   // running the tool calls of a reply, from the first call to the last result
	PhaseFirstByte              // request sent, no token yet
	PhaseReasoning              // reasoning tokens arriving
	PhaseContent                // content tokens, or a reply's tool calls, arriving
	PhaseSilence                // an open stream gone at least stall_after without a byte
	PhaseFailed                 // the attempt ended in an error or a timeout (drawn as a mark at its end)
	nPhases
)

// phaseNames label the phases in legends.
var phaseNames = [nPhases]string{"pacer wait", "tool calls", "waiting for first byte", "reasoning", "content", "silence ≥ stall_after", "failed"}

func (p Phase) String() string { return phaseNames[p] }

// Span is one phase of one agent's request, in simulated seconds since the run started.
type Span struct {
	Agent      int
	StartS     float64
	EndS       float64
	Phase      Phase
	Request    string
	Unfinished bool // the request had no terminal event when the record ends
}

// Gantt holds a run's spans by agent, each agent's in time order, and the run's stops.
type Gantt struct {
	Agents int
	EndS   float64
	Spans  [][]Span // by agent
	Stops  []Stop
}

// Stop is a stop event: the run stopped new rounds or cancelled requests at TS.
type Stop struct {
	TS     float64
	Reason events.EndReason
}

// request is an attempt in progress while spans are built.
type request struct {
	agent                               int
	sent, firstByte, reasoning, content float64 // −1: not yet
}

// BuildGantt derives the spans from a run's events: pacer wait from pacer_wait to
// pacer_acquired; tool calls from a step's first tool_call to its last tool_result; waiting for the first byte from request_sent to the first token; reasoning
// and content from their first tokens to the next phase or the end; silence (stall_after or
// more without a byte) before the first byte, before the terminal event (its
// since_last_byte_s) and wherever a sample saw an open stream that silent; a failure mark at the end of an error or a timeout.
func BuildGantt(r *Run) *Gantt {
	g := &Gantt{Agents: r.Agents, EndS: r.EndS()}
	g.Spans = make([][]Span, g.Agents)
	add := func(s Span) {
		if s.Agent >= 0 && s.Agent < g.Agents && s.EndS >= s.StartS {
			g.Spans[s.Agent] = append(g.Spans[s.Agent], s)
		}
	}
	waiting := map[int]float64{}
	open := map[string]*request{}
	tools := toolSpans{add: add, open: map[int]*toolStep{}}
	for _, e := range r.Events {
		switch {
		case e.Kind == events.ToolCall, e.Kind == events.ToolResult, e.Kind == events.RoundDone:
			tools.event(e)
		case e.Kind == events.PacerWait:
			waiting[e.Agent] = e.TS
		case e.Kind == events.PacerAcquired:
			if t, ok := waiting[e.Agent]; ok {
				add(Span{Agent: e.Agent, StartS: t, EndS: e.TS, Phase: PhasePacerWait})
				delete(waiting, e.Agent)
			}
		case e.Kind == events.RequestSent:
			open[e.Request] = &request{agent: e.Agent, sent: e.TS, firstByte: -1, reasoning: -1, content: -1}
		case e.Kind == events.Headers:
			if q := open[e.Request]; q != nil && q.firstByte < 0 {
				q.firstByte = e.TS
			}
		case e.Kind == events.FirstReasoning:
			if q := open[e.Request]; q != nil {
				q.reasoning = e.TS
				q.byte(e.TS)
			}
		case e.Kind == events.FirstContent, e.Kind == events.FirstToolCall:
			if q := open[e.Request]; q != nil && q.content < 0 {
				q.content = e.TS
				q.byte(e.TS)
			}
		case e.Kind.Terminal():
			if q := open[e.Request]; q != nil {
				requestSpans(add, e.Request, q, e.TS, false)
				firstSilence(add, e.Request, q, r.StallAfterS)
				delete(open, e.Request)
			}
			if slb := e.SinceLastByteS; r.StallAfterS > 0 && slb >= r.StallAfterS {
				add(Span{Agent: e.Agent, StartS: e.TS - slb, EndS: e.TS, Phase: PhaseSilence, Request: e.Request})
			}
			if e.Kind == events.Error || e.Kind == events.Timeout {
				add(Span{Agent: e.Agent, StartS: e.TS, EndS: e.TS, Phase: PhaseFailed, Request: e.Request})
			}
		case e.Kind == events.Stop:
			g.Stops = append(g.Stops, Stop{TS: e.TS, Reason: e.Reason})
		}
	}
	for id, q := range open {
		requestSpans(add, id, q, g.EndS, true)
		firstSilence(add, id, q, r.StallAfterS)
		if q.firstByte < 0 && r.StallAfterS > 0 && g.EndS-q.sent >= r.StallAfterS {
			add(Span{Agent: q.agent, StartS: q.sent, EndS: g.EndS, Phase: PhaseSilence, Request: id, Unfinished: true})
		}
	}
	for a, t := range waiting {
		add(Span{Agent: a, StartS: t, EndS: g.EndS, Phase: PhasePacerWait, Unfinished: true})
	}
	tools.finish(g.EndS)
	silenceFromSamples(r, add)
	for _, s := range g.Spans {
		sort.SliceStable(s, func(i, j int) bool {
			if s[i].StartS != s[j].StartS {
				return s[i].StartS < s[j].StartS
			}
			return s[i].Phase < s[j].Phase
		})
	}
	return g
}

// toolStep is an agent's step of tool calls while spans are built: its request, when its first
// call started and its latest result came, and the calls still running.
type toolStep struct {
	request      string
	start, lastS float64
	running      int
}

// toolSpans turns tool_call and tool_result events into one span per step.
type toolSpans struct {
	add  func(Span)
	open map[int]*toolStep // by agent
}

// event applies a tool_call, tool_result or round_done event.
func (t *toolSpans) event(e events.Event) {
	st := t.open[e.Agent]
	switch e.Kind {
	case events.ToolCall:
		if st != nil && st.request != e.Request {
			t.close(e.Agent, st, st.lastS, false)
			st = nil
		}
		if st == nil {
			st = &toolStep{request: e.Request, start: e.TS, lastS: e.TS}
			t.open[e.Agent] = st
		}
		st.running++
	case events.ToolResult:
		if st != nil {
			st.lastS, st.running = e.TS, st.running-1
		}
	case events.RoundDone:
		if st != nil {
			t.close(e.Agent, st, st.lastS, false)
		}
	}
}

// close adds an agent's step as a span ending at end.
func (t *toolSpans) close(agent int, st *toolStep, end float64, unfinished bool) {
	t.add(Span{Agent: agent, StartS: st.start, EndS: end, Phase: PhaseTool, Request: st.request, Unfinished: unfinished})
	delete(t.open, agent)
}

// finish closes the steps still open when the record ends at endS: those with calls running
// run to the end, unfinished.
func (t *toolSpans) finish(endS float64) {
	for agent, st := range t.open {
		if st.running > 0 {
			t.close(agent, st, endS, true)
		} else {
			t.close(agent, st, st.lastS, false)
		}
	}
}

// byte notes a byte of the response at t.
func (q *request) byte(t float64) {
	if q.firstByte < 0 {
		q.firstByte = t
	}
}

// firstSilence adds the silence before the first byte when it lasted stall_after or more.
func firstSilence(add func(Span), id string, q *request, stallAfterS float64) {
	if q.firstByte >= 0 && stallAfterS > 0 && q.firstByte-q.sent >= stallAfterS {
		add(Span{Agent: q.agent, StartS: q.sent, EndS: q.firstByte, Phase: PhaseSilence, Request: id})
	}
}

// requestSpans adds an attempt's spans, from its send to end.
func requestSpans(add func(Span), id string, q *request, end float64, unfinished bool) {
	firstToken := end
	for _, t := range []float64{q.reasoning, q.content} {
		if t >= 0 {
			firstToken = min(firstToken, t)
		}
	}
	add(Span{Agent: q.agent, StartS: q.sent, EndS: firstToken, Phase: PhaseFirstByte, Request: id, Unfinished: unfinished})
	if q.reasoning >= 0 {
		to := end
		if q.content > q.reasoning {
			to = q.content
		}
		add(Span{Agent: q.agent, StartS: q.reasoning, EndS: to, Phase: PhaseReasoning, Request: id, Unfinished: unfinished})
	}
	if q.content >= 0 {
		add(Span{Agent: q.agent, StartS: q.content, EndS: end, Phase: PhaseContent, Request: id, Unfinished: unfinished})
	}
}

// silenceFromSamples adds, for every open stream a sample saw silent for stall_after or more,
// the silence up to that sample; spans of one request that touch are merged.
func silenceFromSamples(r *Run, add func(Span)) {
	if r.StallAfterS <= 0 {
		return
	}
	type key struct {
		agent int
		req   string
	}
	last := map[key]*Span{}
	var order []key
	for _, s := range r.Samples {
		for _, st := range s.Streams {
			if st.SinceLastByteS < r.StallAfterS {
				continue
			}
			k := key{st.Agent, st.Request}
			from := s.TS - st.SinceLastByteS
			if sp := last[k]; sp != nil && from <= sp.EndS+1e-9 {
				sp.EndS = s.TS
				continue
			}
			if sp := last[k]; sp != nil {
				add(*sp)
			}
			last[k] = &Span{Agent: st.Agent, StartS: from, EndS: s.TS, Phase: PhaseSilence, Request: st.Request}
			order = append(order, k)
		}
	}
	for _, k := range order {
		if sp := last[k]; sp != nil {
			add(*sp)
			delete(last, k)
		}
	}
}

// Lane is one row of an aggregate Gantt chart: a group of agents, with the share of them in
// each phase for each time bin.
type Lane struct {
	// First and Last are the lane's agents, inclusive.
	First, Last int
	// Share[b][p] is the fraction (0–1) of the lane's agents in phase p during bin b.
	Share [][nPhases]float64
	// Failed[b] counts attempts of the lane's agents that failed in bin b.
	Failed []int
}

// Aggregate groups the agents into at most lanes lanes of consecutive agents and bins the run
// into bins of equal time, each holding the share of the lane's agents in each phase at the
// bin's middle (the latest phase wins where spans overlap).
func (g *Gantt) Aggregate(lanes, bins int) (out []Lane, binS float64) {
	per := (g.Agents + lanes - 1) / max(lanes, 1)
	binS = g.EndS / float64(bins)
	if binS <= 0 {
		binS = 1
	}
	for first := 0; first < g.Agents; first += per {
		l := Lane{First: first, Last: min(first+per, g.Agents) - 1, Share: make([][nPhases]float64, bins), Failed: make([]int, bins)}
		n := float64(l.Last - l.First + 1)
		for a := l.First; a <= l.Last; a++ {
			phaseAtBins(g.Spans[a], binS, bins, func(b int, p Phase) { l.Share[b][p] += 1 / n })
			for _, s := range g.Spans[a] {
				if s.Phase == PhaseFailed {
					l.Failed[min(int(s.StartS/binS), bins-1)]++
				}
			}
		}
		out = append(out, l)
	}
	return out, binS
}

// phaseAtBins calls f with each bin's phase, for the bins whose middle one of spans covers.
func phaseAtBins(spans []Span, binS float64, bins int, f func(b int, p Phase)) {
	var at [nPhases]bool
	for b := range bins {
		mid := (float64(b) + 0.5) * binS
		at = [nPhases]bool{}
		found := false
		for _, s := range spans {
			if s.StartS > mid {
				break
			}
			if s.Phase != PhaseFailed && s.EndS >= mid {
				at[s.Phase], found = true, true
			}
		}
		if !found {
			continue
		}
		for p := PhaseSilence; p >= PhasePacerWait; p-- {
			if at[p] {
				f(b, p)
				break
			}
		}
	}
}
