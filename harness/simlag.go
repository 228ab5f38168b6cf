package harness

import (
	"math"
	"time"

	"github.com/agentsim/agentsim/events"
)

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
		if e.Kind.Terminal() && e.Agent >= 0 && e.Agent < len(r.carried) {
			// The agent goes on that much later than its model would (modelBehind).
			r.carried[e.Agent].Add(int64(e.SimLagS * float64(time.Second)))
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
	now := r.start.Add(time.Duration(s.TS * float64(time.Second)))
	for i := range s.Streams {
		st := &s.Streams[i]
		st.SimLagS = requestLag(sim, st.Request, st.SentAgoS)
	}
	// The silent streams the sample does not name (more than it names): the least lag among
	// them, which each of them has at least.
	if unnamed := r.board.UnnamedSilent(); len(unnamed) > 0 && s.Open != nil {
		least := math.Inf(1)
		for _, u := range unnamed {
			least = min(least, requestLag(sim, u.ID, max(0, now.Sub(u.Sent).Seconds())))
		}
		s.Open.UnlistedSilentSimLagS = least
	}
}

// requestLag is how far behind its model, in simulated seconds, the simulator is on the
// request id sent sentAgoS ago: its own lag, or all that time while the simulator has not read
// it.
func requestLag(sim SimLag, id string, sentAgoS float64) float64 {
	if lag, ok := sim.RequestLag(id); ok {
		return lag.Seconds()
	}
	return sentAgoS
}

// sentLate adds to what agent carries (modelBehind) how much later than start_jitter it sent
// its first request, just now — unless it waited for a permit others held, which its model
// would have waited for too.
func (r *run) sentLate(agent int) {
	st := r.pacer.Stats()
	if st.Limit > 0 && st.InUse >= st.Limit {
		return
	}
	late := r.o.Clock.Since(r.start) - r.o.Workload.StartJitter
	r.carried[agent].Add(int64(max(0, late)))
}

// modelBehind returns how far behind its own schedule the run is now, in simulated time, the
// largest of: how late the harness's waits fired since the last sample; an agent that has
// not sent its first request after start_jitter (unless it waits for a permit others hold),
// by the time since; agents waiting in a pacer that has a permit
// for each of them, by the longest wait (the harness has not yet run them); and, against the
// embedded simulator, what each agent not done carries: how much later than start_jitter it
// sent its first request (sentLate), every request it made ended later than in the
// simulator's model by that request's lag at its end, and its open one is behind by its own
// lag now (all the time since it was sent, while the simulator has not
// read it). The clock's time less this is where the run's model of the workload stands: what
// it would have done by now on a machine that kept up.
func (r *run) modelBehind() time.Duration {
	now := r.o.Clock.Now()
	behind := r.o.Clock.Lag().RecentMax()
	states := r.board.States()
	st := r.pacer.Stats()
	// A permit for every waiter: the pacer would let them all go, so their waits are the
	// harness's (a rate-limiting pacer, with no limit, makes its waits on purpose).
	room := st.Limit > 0 && st.InUse+st.Waiting <= st.Limit
	for i, s := range states {
		// An agent that has not sent its first request after start_jitter, other than one
		// waiting for a permit that others hold, is behind by all the time since.
		if s != events.StateDone && !r.sentOnce[i].Load() && (s != events.StatePacerWait || room) {
			behind = max(behind, now.Sub(r.start)-r.o.Workload.StartJitter)
			break
		}
	}
	if st.Waiting > 0 && room {
		behind = max(behind, st.LongestWait)
	}
	sim := r.o.Target.SimLag
	if sim == nil {
		return behind
	}
	behind = max(behind, sim.Behind())
	agent := make([]time.Duration, len(states))
	for i := range agent {
		if states[i] != events.StateDone {
			agent[i] = time.Duration(r.carried[i].Load())
		}
	}
	for _, o := range r.board.Open() {
		lag, ok := sim.RequestLag(o.ID)
		if !ok {
			lag = max(0, now.Sub(o.Sent))
		}
		if o.Agent >= 0 && o.Agent < len(agent) {
			lag += agent[o.Agent]
		}
		behind = max(behind, lag)
	}
	for _, a := range agent {
		behind = max(behind, a)
	}
	return behind
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
