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
// in that window, and of the embedded simulator's — the p99 of its deliveries' lateness in
// the window, or how far behind its model it is now, the larger — and sets the clock's
// speedup: down, in proportion and at least by half, when the harness's exceeds the bound (1 %
// of stall_after) or the simulator's grew since the window before by more than an eighth of
// it (on a lag above a quarter of it); up by a fifth when the harness's is below a quarter of
// the bound and the simulator's is too or did not grow; else it holds. A generation the simulator delivered late stays late by as much until it ends
// (docs/engine.md), so the simulator's lag says the machine falls behind only while it grows.
const (
	maxPaceWindow  = 250 * time.Millisecond
	maxPaceShare   = 0.01 // of stall_after: the lag bound
	maxPaceMin     = 1.0
	maxPaceCeiling = 10000.0
	maxPaceUp      = 1.2
)

// MaxPace is a --speedup max run's controller of its clock's speedup.
type MaxPace struct {
	clk    *clock.Clock
	bound  time.Duration        // simulated
	own    *clock.LagWindow     // the harness's
	sim    *clock.LagWindow     // the simulator's; nil against none
	behind func() time.Duration // the simulator's; nil against none
	// simBefore is the simulator's lag in the window before, to tell growth.
	simBefore time.Duration
	start     time.Time
	// perWindow is the speedup each window ran at; samples the changes.
	perWindow []float64
	samples   []results.SpeedupSample
}

// NewMaxPace returns the controller of clk (made by clock.Adjustable) that keeps the p99 of
// the harness's lag own, and the simulator's sim (nil: none, then behind is nil too), within
// bound (simulated).
func NewMaxPace(clk *clock.Clock, bound time.Duration, own, sim *clock.Lag, behind func() time.Duration) *MaxPace {
	p := &MaxPace{clk: clk, bound: bound, own: own.Window(), behind: behind, start: clk.Now()}
	if sim != nil {
		p.sim = sim.Window()
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
	var sim time.Duration
	if p.sim != nil {
		sim = max(p.sim.Next().P99, p.behind())
	}
	before := p.simBefore
	p.simBefore = sim
	// Growth: new lateness in this window of more than an eighth of the bound, on a lag
	// above a quarter of it.
	grew := sim > p.bound/4 && sim-before > p.bound/8
	next := s
	switch {
	case own > p.bound || grew:
		// Wall lag stays roughly constant as the speedup changes, and simulated lag is wall
		// lag times the speedup: scale down to where the bound holds, at least by half.
		worst := own
		if grew {
			worst = max(worst, sim)
		}
		next = s * min(0.5, float64(p.bound)/float64(worst))
	case own < p.bound/4 && (sim < p.bound/4 || sim <= before):
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
