package engine

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/agentsim/agentsim/clock"
)

// timeline keeps an engine loop's steps on an absolute simulated schedule: each step ends one
// step duration after the previous one ended, not after the loop finished its bookkeeping.
// At high --speedup the wall time the loop spends between steps (emitting tokens, waking
// handlers) would otherwise leak into simulated time and slow the modelled engine; instead
// the loop catches up by running late steps back to back. A lag beyond maxLagWall of wall
// time (a GC pause, an overloaded machine) is forgiven rather than caught up in a burst.
//
// Whatever the loop does not catch up is the simulator's own lateness (docs/engine.md,
// "The simulator's own lag"): due and late say, after each step, when the model says the
// step ended and how much later it really did.
type timeline struct {
	clk  *clock.Clock
	next time.Time // simulated end of the last scheduled step; zero after idle
	// forgiven is the lateness forgiven when the current step started, simulated: the
	// schedule restarted from then, so due reports the step's end without it.
	forgiven time.Duration
	// published, when set, receives due as each step starts (UnixNano; 0 after reset), for
	// Engine.Behind to read how late the loop is while it runs.
	published *atomic.Int64
}

// maxLagWall is the largest wall-time lag the timeline catches up.
const maxLagWall = 50 * time.Millisecond

// reset forgets the schedule; the next step starts now. Call it when the loop goes idle.
func (t *timeline) reset() {
	t.next, t.forgiven = time.Time{}, 0
	if t.published != nil {
		t.published.Store(0)
	}
}

// step waits until a step of duration d, scheduled after the previous one, has ended. It
// returns false when ctx ends first.
func (t *timeline) step(ctx context.Context, d time.Duration) bool {
	if wait := t.schedule(d); wait > 0 {
		return t.clk.Sleep(ctx, wait) == nil
	}
	return ctx.Err() == nil
}

// schedule schedules a step of duration d after the previous one and returns how long from
// the clock's reading it ends.
func (t *timeline) schedule(d time.Duration) time.Duration {
	now := t.clk.Now()
	t.forgiven = 0
	if t.next.IsZero() {
		t.next = now
	} else if late := now.Sub(t.next); late > t.clk.ToSim(maxLagWall) {
		t.next, t.forgiven = now, late
	}
	t.next = t.next.Add(d)
	t.publish()
	return t.next.Sub(now)
}

// publish stores due for Engine.Behind, when the timeline publishes.
func (t *timeline) publish() {
	if t.published != nil {
		t.published.Store(t.due().UnixNano())
	}
}

// stepUntil is step for a wait an arrival may cut short (a colocated-parallel loop's, whose
// next request starts its prefill at once): it waits until a step of duration d has ended or
// arrivals or wake is signalled. Cut short, the schedule stands at the clock's reading (never
// before the previous step's end), the step's rest unscheduled. It returns false when ctx
// ends first.
func (t *timeline) stepUntil(ctx context.Context, d time.Duration, arrivals, wake <-chan struct{}) bool {
	before := t.next
	wait := t.schedule(d)
	if wait <= 0 {
		return ctx.Err() == nil
	}
	timer := t.clk.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-arrivals:
	case <-wake:
	case <-ctx.Done():
		return false
	}
	now := t.clk.Now()
	if now.Before(before) {
		now = before
	}
	t.next, t.forgiven = now, 0
	t.publish()
	return true
}

// at returns the model's time the next step starts from: the last step's scheduled end, or the
// clock's reading when none is scheduled.
func (t *timeline) at() time.Time {
	if t.next.IsZero() {
		return t.clk.Now()
	}
	return t.next
}

// due returns the simulated time the model says the last step ended: its scheduled end,
// before any lateness forgiven when it started.
func (t *timeline) due() time.Time { return t.next.Add(-t.forgiven) }

// late returns how much later than due the last step is ending now, in simulated time (≥ 0):
// how far behind its schedule the loop is; 0 while it is idle.
func (t *timeline) late() time.Duration {
	if t.next.IsZero() {
		return 0
	}
	return max(0, t.clk.Now().Sub(t.due()))
}
