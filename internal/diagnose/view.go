package diagnose

import (
	"cmp"
	"slices"

	"github.com/agentsim/agentsim/events"
)

// view is who waits on what at one instant: the facts every verdict rule and the watchdog
// read, computed afresh from the Analyzer's state.
type view struct {
	nowS    float64
	agents  int   // agents in the run
	running int   // agents not done
	tools   int   // of running, agents running the tool calls of a reply: neither stalled nor waiting on the server
	timed   []int // agents in start jitter, tool, backoff or think time
	busy    []int // agents between two steps of a round
	waiting []waiter
	// silent lists the open requests silent ≥ StallAfter, longest silence first;
	// silentRequesting counts the running agents inside one of them.
	silent           []*request
	silentRequesting int
	// held lists the permits held now (leaked ones included), leaked those that leaked and
	// heldSilent those whose request has been silent ≥ StallAfter.
	held       []*permit
	leaked     []*permit
	heldSilent []*request
	limit      int
	ser        serialization
	// quietS is how long nothing has moved (no byte, no request end), less the embedded
	// simulator's lag (Analyzer.quietS); hung is set once that reaches HangAfter while agents
	// still run: only then may the run be called stuck for good (deadlock) and ended.
	quietS float64
	hung   bool
	// queued lists the silent requests that are queueing rather than stalled: no output
	// token yet while the server reports queued work and the run still moves. stalled is
	// silent without them.
	queued  []*request
	stalled []*request
}

// waiter is an agent waiting in the pacer and for how long, in seconds.
type waiter struct {
	agent int
	waitS float64
}

// view computes the view at nowS.
func (a *Analyzer) view(nowS float64) *view {
	v := &view{nowS: nowS, agents: len(a.agents), limit: a.limit()}
	for _, r := range a.open {
		if a.heardSilenceS(r, nowS) >= a.stallS {
			v.silent = append(v.silent, r)
		}
	}
	slices.SortFunc(v.silent, func(x, y *request) int {
		return cmp.Or(cmp.Compare(x.lastByteS, y.lastByteS), cmp.Compare(x.agent, y.agent), cmp.Compare(x.id, y.id))
	})
	a.viewAgents(v)
	a.viewPermits(v)
	v.quietS = a.quietS(nowS)
	v.hung = v.running > v.tools && v.quietS >= a.hangS
	serverQueues := a.gauges[events.Queued] != nil && a.gauges[events.Queued].value > 0
	for _, r := range v.silent {
		if serverQueues && !r.output && v.quietS < a.stallS {
			v.queued = append(v.queued, r)
		} else {
			v.stalled = append(v.stalled, r)
		}
	}
	return v
}

// viewAgents sorts the agents by what they do.
func (a *Analyzer) viewAgents(v *view) {
	for id, ag := range a.agents {
		switch {
		case ag.state == events.StateDone:
			continue
		case ag.state.Timed():
			v.timed = append(v.timed, id)
			if ag.state == events.StateTool {
				v.tools++
			}
		case ag.state == events.StatePacerWait:
			v.waiting = append(v.waiting, waiter{agent: id, waitS: v.nowS - ag.sinceS})
		case ag.state == events.StateRequesting:
			if r := a.open[ag.request]; r != nil && a.heardSilenceS(r, v.nowS) >= a.stallS {
				v.silentRequesting++
			}
		default:
			v.busy = append(v.busy, id)
		}
		v.running++
	}
	slices.SortFunc(v.waiting, func(x, y waiter) int {
		return cmp.Or(cmp.Compare(y.waitS, x.waitS), cmp.Compare(x.agent, y.agent))
	})
}

// viewPermits sorts the held permits into leaked, held by silent requests, and others.
func (a *Analyzer) viewPermits(v *view) {
	byPermit := map[uint64]*request{}
	for _, r := range a.open {
		if r.permit != 0 {
			byPermit[r.permit] = r
		}
	}
	for _, p := range a.ledger.held {
		v.held = append(v.held, p)
	}
	slices.SortFunc(v.held, func(x, y *permit) int {
		return cmp.Or(cmp.Compare(x.acquiredS, y.acquiredS), cmp.Compare(x.id, y.id))
	})
	for _, p := range v.held {
		switch r := byPermit[p.id]; {
		case p.leaked:
			v.leaked = append(v.leaked, p)
		case r != nil && a.heardSilenceS(r, v.nowS) >= a.stallS:
			v.heldSilent = append(v.heldSilent, r)
		}
	}
}

// pacerBlocked reports whether the pacer cannot issue a permit until stuck work ends: its
// limit is known, every permit is held, and each is leaked or held by a request silent
// ≥ StallAfter.
func (v *view) pacerBlocked() bool {
	stuck := len(v.leaked) + len(v.heldSilent)
	return v.limit > 0 && len(v.held) >= v.limit && stuck == len(v.held)
}

// nothingCanWake reports whether nothing but the server can move the run again: some agent
// still runs, none is in timed work, each is inside a request silent ≥ StallAfter or waits in
// a blocked pacer, and no armed timeout can end an open request (a TTFT timeout cannot end
// one that already had its first token). The server may still resume the silent streams, so
// this alone calls nothing a deadlock: see view.hung.
func (a *Analyzer) nothingCanWake(v *view) bool {
	if v.running == 0 || len(v.timed) > 0 || len(v.busy) > 0 {
		return false
	}
	if v.silentRequesting+len(v.waiting) != v.running {
		return false
	}
	if len(v.waiting) > 0 && !v.pacerBlocked() {
		return false
	}
	// With no request open, a leaked permit is never freed.
	for _, r := range a.open {
		if canEnd(a.cfg.Timeouts, r) {
			return false
		}
	}
	return true
}
