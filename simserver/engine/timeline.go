package engine

import (
	"context"
	"time"

	"github.com/agentsim/agentsim/clock"
)

// timeline keeps an engine loop's steps on an absolute simulated schedule: each step ends one
// step duration after the previous one ended, not after the loop finished its bookkeeping.
// At high --speedup the wall time the loop spends between steps (emitting tokens, waking
// handlers) would otherwise leak into simulated time and slow the modelled engine; instead
// the loop catches up by running late steps back to back. A lag beyond maxLagWall of wall
// time (a GC pause, an overloaded machine) is forgiven rather than caught up in a burst.
type timeline struct {
	clk  *clock.Clock
	next time.Time // simulated end of the last scheduled step; zero after idle
}

// maxLagWall is the largest wall-time lag the timeline catches up.
const maxLagWall = 50 * time.Millisecond

// reset forgets the schedule; the next step starts now. Call it when the loop goes idle.
func (t *timeline) reset() { t.next = time.Time{} }

// step waits until a step of duration d, scheduled after the previous one, has ended. It
// returns false when ctx ends first.
func (t *timeline) step(ctx context.Context, d time.Duration) bool {
	now := t.clk.Now()
	if t.next.IsZero() || now.Sub(t.next) > t.clk.ToSim(maxLagWall) {
		t.next = now
	}
	t.next = t.next.Add(d)
	if wait := t.next.Sub(now); wait > 0 {
		return t.clk.Sleep(ctx, wait) == nil
	}
	return ctx.Err() == nil
}
