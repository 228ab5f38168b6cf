package diagnose

import "github.com/agentsim/agentsim/events"

// permit is one pacer permit held now, as the events tell.
type permit struct {
	id        uint64
	agent     int
	acquiredS float64
	// leaked is set when the permit's request ended without releasing it (a release event
	// with leaked=true, a round that ended without any release, or a sample that says so);
	// leakedS is when that was first seen.
	leaked  bool
	leakedS float64
}

// ledger keeps the pacer's accounting from the events: acquired = released + held, leaked
// permits being held forever.
type ledger struct {
	held     map[uint64]*permit
	acquired int64
	released int64
	synth    uint64 // ids for permits that carry none (pacers without permit ids)
}

func newLedger() ledger { return ledger{held: map[uint64]*permit{}} }

// onPacerEvent tracks permits through pacer_acquired, release and the end of rounds.
func (a *Analyzer) onPacerEvent(e events.Event) {
	l := &a.ledger
	switch e.Kind {
	case events.PacerAcquired:
		id := e.Permit
		if id == 0 {
			l.synth++
			id = 1<<63 | l.synth
		}
		l.held[id] = &permit{id: id, agent: e.Agent, acquiredS: e.TS}
		l.acquired++
		a.agent(e.Agent).permit = id
	case events.Release:
		v := a.agent(e.Agent)
		id := e.Permit
		if l.held[id] == nil {
			id = v.permit
		}
		if p := l.held[id]; p != nil {
			if e.Leaked {
				p.leak(e.TS)
			} else {
				delete(l.held, id)
				l.released++
			}
		}
		v.permit = 0
	case events.RoundDone, events.AgentDone:
		// The round is over: a permit its agent still holds was never released.
		v := a.agent(e.Agent)
		if p := l.held[v.permit]; p != nil {
			p.leak(e.TS)
		}
		v.permit = 0
	}
}

// leak marks p leaked at t, keeping the first time it was seen.
func (p *permit) leak(t float64) {
	if !p.leaked {
		p.leaked, p.leakedS = true, t
	}
}

// onPacerSample marks the permits the sample reports leaked. The events have the last word:
// a permit its agent's round still owns (during a retry's backoff, say) is not leaked,
// whatever the sample guessed.
func (a *Analyzer) onPacerSample(s events.Sample) {
	if s.Pacer == nil {
		return
	}
	if s.Pacer.Limit > 0 {
		a.pacerLimit = s.Pacer.Limit
	}
	for _, h := range s.Pacer.Held {
		p := a.ledger.held[h.Permit]
		if p != nil && h.Leaked && a.agent(p.agent).permit != p.id {
			p.leak(s.TS)
		}
	}
}
