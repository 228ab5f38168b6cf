package harness

import "github.com/agentsim/agentsim/events"

// The embedded simulator's own lag in the run's records (docs/verdicts.md). Every sample
// carries the simulator's lag since the sample before, and a stop event its lag when the
// harness began stopping; and each request's own: the samples name it for the streams they
// list, and a request's byte and terminal events carry it as the harness records them, so
// that the verdict credits a silence with its own request's lateness only — a request the
// simulator's model gives no token (wedged) is not behind it, however late the simulator is
// on the others. results.json's summary of it and its warning are lag.go's.

// recordSimLag fills in e's simulator lag when the target is the embedded simulator, and
// leaves e alone otherwise: a stop event's is the simulator's lag now (simLagNow), a byte or
// terminal event's its request's own. A request that ends before the simulator has read it
// (or that it has forgotten) is behind its model by all the time since it was sent: its
// latency.
func (r *run) recordSimLag(e *events.Event) {
	sim := r.o.Target.SimLag
	if sim == nil {
		return
	}
	switch {
	case e.Kind == events.Stop:
		e.SimLagS = r.simLagNow(false)
	case e.Request == "": // not a request's event
	case e.Kind == events.Headers, e.Kind == events.FirstReasoning, e.Kind == events.FirstContent, e.Kind == events.FirstToolCall,
		e.Kind.Terminal():
		if lag, ok := sim.RequestLag(e.Request); ok {
			e.SimLagS = lag.Seconds()
		} else if e.Kind.Terminal() {
			e.SimLagS = e.LatencyS
		}
	}
}

// sampleSimLag fills in s's simulator lag, starting a new period (simLagNow), and each
// stream's that s names its request's own, when the target is the embedded simulator. A
// request the simulator has not read yet is behind its model, which would have read it when
// it was sent, by all the time since.
func (r *run) sampleSimLag(s *events.Sample) {
	sim := r.o.Target.SimLag
	if sim == nil {
		return
	}
	s.SimLagS = r.simLagNow(true)
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

// simLagNow returns the embedded simulator's lag for a sample (take: starting a new period) or
// a stop event, in simulated seconds: the latest delivery since the previous sample, or how
// far behind its model it is now, the later. The target is the embedded simulator.
func (r *run) simLagNow(take bool) float64 {
	sim := r.o.Target.SimLag
	recent := sim.Lag().RecentMax()
	if take {
		recent = sim.Lag().TakeRecentMax()
	}
	return max(recent, sim.Behind()).Seconds()
}
