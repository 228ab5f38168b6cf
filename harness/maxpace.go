package harness

import (
	"context"
	"math"
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
// it cannot take back the old, so the controller answers the new.
//
// Both lags are mostly wall-clock jitter — a wake-up a millisecond late is 0.3 s simulated at
// 300× — so they grow with the speedup, and the rate the bound allows is where they reach it.
// The controller steers by their levels: down when the harness's lag exceeds the bound (1 % of
// stall_after), when the simulator gains more than half of it in one window, or when the
// simulator's lag is above the bound and still gains more than a 64th of it a window; up while
// the harness's lag is within half the bound and the simulator gains no more than a quarter
// of it (no more than a 64th while its lag is above the bound), by the square root of the room
// left (at least a fifth, at most double); else it holds. Lateness the simulator carries from
// before does not hold the rate down: it does not grow with it. A window
// lowers the rate by at least half and at most to a quarter: one late wake-up, which is the
// p99 of a window with few waits, costs one step, not the run's pace.
const (
	maxPaceWindow  = 250 * time.Millisecond
	maxPaceShare   = 0.01 // of stall_after: the lag bound
	maxPaceMin     = 1.0
	maxPaceCeiling = 10000.0
	// maxPaceUp and maxPaceUpMost are the least and the most a window raises the speedup by;
	// maxPaceDown and maxPaceDownMost the least and the most it lowers it by, as factors.
	maxPaceUp       = 1.2
	maxPaceUpMost   = 2.0
	maxPaceDown     = 0.5
	maxPaceDownMost = 0.25
	// maxPaceRoom is the share of the bound the harness's lag stays within for the rate to rise.
	maxPaceRoom = 0.5
	// maxPaceNew, maxPaceNewUp and maxPaceStill are the simulator's new lateness a window, as
	// fractions of the bound, that is too much at any lag, that is too much to rise, and that
	// counts as none.
	maxPaceNew   = 1.0 / 2
	maxPaceNewUp = 1.0 / 4
	maxPaceStill = 1.0 / 64
	// maxPaceNewAim is the new lateness a window, as a fraction of the bound, that a slow-down
	// answering new lateness aims for.
	maxPaceNewAim = 1.0 / 16
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
	bound := float64(p.bound)
	newTooMuch := float64(gained) > maxPaceNew*bound
	still := float64(gained) <= maxPaceStill*bound
	// The room left: the harness's lag within half the bound, the simulator's new lateness
	// within a quarter of it. Its carried lateness is old: it holds only when above the bound
	// and still growing.
	room := min(maxPaceRoom*bound/max(float64(own), 1), maxPaceNewUp*bound/max(float64(gained), 1))
	next := s
	switch {
	case own > p.bound || newTooMuch || (sim > p.bound && !still):
		// Wall lag stays roughly constant as the speedup changes, and simulated lag is wall
		// lag times the speedup: scale down to where the bound holds — the harness's lag
		// within it, the simulator's new lateness within a 16th of it — by half to a quarter.
		factor := maxPaceDown
		if own > p.bound {
			factor = min(factor, bound/float64(own))
		}
		if !still {
			factor = min(factor, maxPaceNewAim*bound/float64(gained))
		}
		next = s * max(factor, maxPaceDownMost)
	case room > 1 && (sim <= p.bound || still):
		// The square root halves, in proportion, the way to where the lags would fill the
		// room: a lag that is a wake-up's jitter is noisy.
		next = s * min(max(math.Sqrt(room), maxPaceUp), maxPaceUpMost)
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
