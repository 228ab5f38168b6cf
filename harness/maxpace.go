package harness

import (
	"context"
	"slices"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/results"
)

// The --speedup max controller (docs/speed.md). A run on an Adjustable clock owns one: every
// window of maxPaceWindow wall time it reads the p99 of the lag the harness's waits recorded
// in that window, and of the embedded simulator's: the p99 of its deliveries' lateness in the
// window, or how far behind its model it is now, the larger — and the part of it that is new,
// the p99 of the lateness its deliveries gained in the window (SimLag.NewLateness), or how much
// further behind its model it fell, the larger. A generation the simulator delivered late
// stays late by as much until it ends (docs/engine.md): slowing the clock stops new lateness,
// it cannot take back the old, so the controller answers the new. It sets the clock's speedup
// down, in proportion and at least by half, when the harness's lag exceeds the bound (1 % of
// stall_after), when the simulator's new lateness exceeds an eighth of it, or when the
// simulator's lag is above the bound and still gains more than a 64th of it a window; up by a
// fifth when the harness's lag is below a quarter of the bound and the simulator's gains no
// more than a 64th of it and is within the bound; else it holds.
const (
	maxPaceWindow  = 250 * time.Millisecond
	maxPaceShare   = 0.01 // of stall_after: the lag bound
	maxPaceMin     = 1.0
	maxPaceCeiling = 10000.0
	maxPaceUp      = 1.2
	// maxPaceNew and maxPaceStill are the simulator's new lateness a window, as fractions of
	// the bound, that is too much at any lag, and that counts as none.
	maxPaceNew   = 1.0 / 8
	maxPaceStill = 1.0 / 64
)

// MaxPace is a --speedup max run's controller of its clock's speedup.
type MaxPace struct {
	clk   *clock.Clock
	bound time.Duration    // simulated
	own   *clock.LagWindow // the harness's
	sim   SimLag           // nil against none
	simW  *clock.LagWindow // sim's deliveries; nil against none
	// behindBefore is how far behind its model the simulator was at the window before, to tell
	// how much further it fell.
	behindBefore time.Duration
	start        time.Time
	// perWindow is the speedup each window ran at; samples the changes.
	perWindow []float64
	samples   []results.SpeedupSample
}

// NewMaxPace returns the controller of clk (made by clock.Adjustable) that keeps the p99 of
// the harness's lag own, and the embedded simulator's sim (nil: none), within bound
// (simulated).
func NewMaxPace(clk *clock.Clock, bound time.Duration, own *clock.Lag, sim SimLag) *MaxPace {
	p := &MaxPace{clk: clk, bound: bound, own: own.Window(), sim: sim, start: clk.Now()}
	if sim != nil {
		p.simW = sim.Lag().Window()
		p.behindBefore = sim.Behind()
		sim.NewLateness() // the first window starts now
	}
	p.samples = append(p.samples, results.SpeedupSample{TS: 0, Speedup: clk.Speedup()})
	return p
}

// Run adjusts the speedup every window until ctx is done.
func (p *MaxPace) Run(ctx context.Context) {
	t := p.clk.NewTicker(p.clk.ToSim(maxPaceWindow))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if p.Step() {
				t.Reset(p.clk.ToSim(maxPaceWindow))
			}
		}
	}
}

// Step ends a window: it reads the lags, sets the speedup for the next window and reports
// whether it changed.
func (p *MaxPace) Step() bool {
	s := p.clk.Speedup()
	p.perWindow = append(p.perWindow, s)
	own := p.own.Next().P99
	var sim, gained time.Duration
	if p.sim != nil {
		behind := p.sim.Behind()
		sim = max(p.simW.Next().P99, behind)
		gained = max(p.sim.NewLateness(), behind-p.behindBefore)
		p.behindBefore = behind
	}
	newTooMuch := float64(gained) > maxPaceNew*float64(p.bound)
	still := float64(gained) <= maxPaceStill*float64(p.bound)
	next := s
	switch {
	case own > p.bound || newTooMuch || (sim > p.bound && !still):
		// Wall lag stays roughly constant as the speedup changes, and simulated lag is wall
		// lag times the speedup: scale down to where the bound holds — the harness's lag
		// within it, the simulator's new lateness within a 64th of it — at least by half.
		factor := 0.5
		if own > p.bound {
			factor = min(factor, float64(p.bound)/float64(own))
		}
		if !still {
			factor = min(factor, maxPaceNew/2*float64(p.bound)/float64(gained))
		}
		next = s * factor
	case own < p.bound/4 && still && sim <= p.bound:
		next = s * maxPaceUp
	}
	next = min(max(next, maxPaceMin), maxPaceCeiling)
	if next == s || p.clk.SetSpeedup(next) != nil {
		return false
	}
	p.samples = append(p.samples, results.SpeedupSample{TS: p.clk.Since(p.start).Seconds(), Speedup: next})
	return true
}

// Achieved summarises the speedup over the windows so far for results.json.
func (p *MaxPace) Achieved() *results.SpeedupAchieved {
	a := &results.SpeedupAchieved{Mode: "max", LagBoundS: p.bound.Seconds(), Samples: p.samples}
	w := slices.Clone(p.perWindow)
	if len(w) == 0 {
		w = []float64{p.clk.Speedup()}
	}
	slices.Sort(w)
	a.Min, a.Median, a.Max = w[0], w[len(w)/2], w[len(w)-1]
	return a
}
