package harness

import "github.com/agentsim/agentsim/events"

// Each request's own lag in the embedded simulator (docs/verdicts.md): the samples name it
// for the streams they list, and a request's byte and terminal events carry it as the harness
// records them, so that the verdict credits a silence with its own request's lateness only —
// a request the simulator's model gives no token (wedged) is not behind it, however late the
// simulator is on the others.

// requestSimLag returns e with its request's own simulator lag when e is a byte or terminal
// event of a request and the target is the embedded simulator; e as it is otherwise.
func (r *run) requestSimLag(e events.Event) events.Event {
	sim := r.o.Target.SimLag
	if sim == nil || e.Request == "" {
		return e
	}
	switch {
	case e.Kind == events.Headers, e.Kind == events.FirstReasoning, e.Kind == events.FirstContent, e.Kind.Terminal():
		if lag, ok := sim.RequestLag(e.Request); ok {
			e.SimLagS = lag.Seconds()
		}
	}
	return e
}

// streamsSimLag fills in each stream s names its request's own simulator lag, when the
// target is the embedded simulator. A request the simulator has not read yet has none.
func (r *run) streamsSimLag(s *events.Sample) {
	sim := r.o.Target.SimLag
	if sim == nil {
		return
	}
	s.SimLagPerRequest = true
	for i := range s.Streams {
		if lag, ok := sim.RequestLag(s.Streams[i].Request); ok {
			s.Streams[i].SimLagS = lag.Seconds()
		}
	}
}
