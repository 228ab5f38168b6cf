package report

import (
	"github.com/agentsim/agentsim/events"
)

// Series is one line of a timeline: Y against X in simulated seconds.
type Series struct {
	Name string
	X, Y []float64
}

// Timelines are a run's time series, one point per sample unless said otherwise.
type Timelines struct {
	// States are the agents per state, in the order of States (stacked in that order).
	States []Series
	// Open counts open streams (in flight); Silent those silent for stall_after or more.
	Open, Silent Series
	// Holders and Waiters are the pacer's permits held and agents waiting; Limit its limit
	// (empty when unbounded or unknown).
	Holders, Waiters, Limit Series
	// Gauges are the server's canonical gauges found, by name (decode_running …).
	Gauges map[string]Series
	// TokS is the harness's output rate in tokens per second: each successful request's
	// completion tokens spread evenly over its time from first token to end, in bins of BinS.
	TokS Series
	BinS float64
	// Lag is the harness's largest scheduling lag between samples, in simulated seconds.
	Lag Series
}

// stackStates is the order agent states are stacked in, from the bottom.
var stackStates = []events.State{events.StateRequesting, events.StatePacerWait, events.StateBackoff,
	events.StateTool, events.StateReading, events.StateThinking, events.StateStarting, events.StateDone}

// BuildTimelines derives the timelines from a run's samples and, for the output rate, from its
// events.
func BuildTimelines(r *Run) *Timelines {
	t := &Timelines{Gauges: map[string]Series{}}
	t.States = make([]Series, len(stackStates))
	for i, s := range stackStates {
		t.States[i].Name = string(s)
	}
	t.Open.Name, t.Silent.Name = "open streams", "silent streams"
	t.Holders.Name, t.Waiters.Name, t.Limit.Name = "permits held", "agents waiting", "limit"
	t.Lag.Name = "scheduling lag"
	for _, s := range r.Samples {
		for i, st := range stackStates {
			t.States[i].X = append(t.States[i].X, s.TS)
			t.States[i].Y = append(t.States[i].Y, float64(s.Agents[st]))
		}
		silent := s.SilentStreams(r.StallAfterS)
		appendXY(&t.Lag, s.TS, s.LagS)
		appendXY(&t.Open, s.TS, float64(s.InFlight))
		appendXY(&t.Silent, s.TS, float64(silent))
		if p := s.Pacer; p != nil {
			appendXY(&t.Holders, s.TS, float64(p.InUse))
			appendXY(&t.Waiters, s.TS, float64(p.Waiting))
			if p.Limit > 0 {
				appendXY(&t.Limit, s.TS, float64(p.Limit))
			}
		}
		for name, v := range s.Server {
			g := t.Gauges[name]
			g.Name = name
			appendXY(&g, s.TS, v)
			t.Gauges[name] = g
		}
	}
	t.TokS, t.BinS = outputRate(r)
	return t
}

func appendXY(s *Series, x, y float64) {
	s.X = append(s.X, x)
	s.Y = append(s.Y, y)
}

// outputRate bins the output tokens of successful requests over their streaming time: about
// 200 bins, at least a second each.
func outputRate(r *Run) (Series, float64) {
	end := r.EndS()
	binS := max(end/200, 1)
	n := int(end/binS) + 1
	tok := make([]float64, n)
	first := map[string]float64{}
	for _, e := range r.Events {
		switch e.Kind {
		case events.FirstReasoning, events.FirstContent, events.FirstToolCall:
			if _, ok := first[e.Request]; !ok {
				first[e.Request] = e.TS
			}
		case events.Done:
			from, ok := first[e.Request]
			if !ok || e.CompletionTokens == 0 {
				from = e.TS
			}
			spread(tok, binS, from, e.TS, float64(e.CompletionTokens))
		}
	}
	s := Series{Name: "output tok/s (harness)"}
	for i, v := range tok {
		s.X = append(s.X, (float64(i)+0.5)*binS)
		s.Y = append(s.Y, v/binS)
	}
	return s, binS
}

// spread adds amount to the bins over [from, to], in proportion to the time in each.
func spread(bins []float64, binS, from, to, amount float64) {
	if to <= from {
		bins[min(int(to/binS), len(bins)-1)] += amount
		return
	}
	rate := amount / (to - from)
	for b := int(from / binS); b < len(bins) && float64(b)*binS < to; b++ {
		lo, hi := max(from, float64(b)*binS), min(to, float64(b+1)*binS)
		if hi > lo {
			bins[b] += rate * (hi - lo)
		}
	}
}

// Latencies are a run's per-request observations, in simulated seconds, for the
// distributions: successful requests only, pacer wait for every acquisition.
type Latencies struct {
	TTFT, TTFTContent, E2E, ITL, PacerWait []float64
}

// BuildLatencies collects the observations from a run's events.
func BuildLatencies(r *Run) *Latencies {
	l := &Latencies{}
	for _, e := range r.Events {
		switch e.Kind {
		case events.Done:
			l.E2E = append(l.E2E, e.LatencyS)
			if e.TTFTS > 0 {
				l.TTFT = append(l.TTFT, e.TTFTS)
			}
			if e.TTFTContentS > 0 {
				l.TTFTContent = append(l.TTFTContent, e.TTFTContentS)
			}
			if e.ITLS > 0 {
				l.ITL = append(l.ITL, e.ITLS)
			}
		case events.PacerAcquired:
			l.PacerWait = append(l.PacerWait, e.PacerWaitS)
		}
	}
	return l
}
