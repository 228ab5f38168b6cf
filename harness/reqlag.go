package harness

import "github.com/agentsim/agentsim/events"

// Each request's own lag in the embedded simulator (docs/verdicts.md): the samples name it
// for the streams they list, and a request's byte and terminal events carry it as the harness
// records them, so that the verdict credits a silence with its own request's lateness only —
// a request the simulator's model gives no token (wedged) is not behind it, however late the
// simulator is on the others.

// requestSimLag sets e's simulator lag to its request's own when e is a byte or terminal
// event of a request and the target is the embedded simulator, and leaves e alone otherwise. A request
// that ends before the simulator has read it (or that it has forgotten) is behind its model by
// all the time since it was sent: its latency.
func (r *run) requestSimLag(e *events.Event) {
	sim := r.o.Target.SimLag
	if sim == nil || e.Request == "" {
		return
	}
	switch {
	case e.Kind == events.Headers, e.Kind == events.FirstReasoning, e.Kind == events.FirstContent, e.Kind.Terminal():
		if lag, ok := sim.RequestLag(e.Request); ok {
			e.SimLagS = lag.Seconds()
		} else if e.Kind.Terminal() {
			e.SimLagS = e.LatencyS
		}
	}
}

// streamsSimLag fills in each stream s names its request's own simulator lag, when the
// target is the embedded simulator. A request the simulator has not read yet is behind its
// model, which would have read it when it was sent, by all the time since.
func (r *run) streamsSimLag(s *events.Sample) {
	sim := r.o.Target.SimLag
	if sim == nil {
		return
	}
	s.SimLagPerRequest = true
	for i := range s.Streams {
		st := &s.Streams[i]
		if lag, ok := sim.RequestLag(st.Request); ok {
			st.SimLagS = lag.Seconds()
		} else {
			st.SimLagS = st.SentAgoS
		}
	}
}
