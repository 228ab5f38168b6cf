package engine

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/clock"
)

// TestTimelineAbsorbsLoopWork checks that work between steps does not stretch the schedule
// (it would slow the modelled engine at high speedup), and that a lag beyond maxLagWall is
// forgiven instead of caught up in a burst.
func TestTimelineAbsorbsLoopWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		start := clk.Now()
		tl := timeline{clk: clk}
		ctx := context.Background()
		tl.step(ctx, 10*time.Millisecond)
		time.Sleep(4 * time.Millisecond) // the loop's own work
		tl.step(ctx, 10*time.Millisecond)
		assert.Equal(t, 20*time.Millisecond, clk.Since(start), "the second step ends on schedule")

		time.Sleep(15 * time.Millisecond) // late by 5 ms: the next step runs at once
		tl.step(ctx, 10*time.Millisecond)
		assert.Equal(t, 35*time.Millisecond, clk.Since(start), "a late step runs back to back")

		time.Sleep(time.Second) // far beyond the forgiven lag
		tl.step(ctx, 10*time.Millisecond)
		assert.Equal(t, 1045*time.Millisecond, clk.Since(start), "the schedule restarts from now")

		tl.reset()
		time.Sleep(time.Millisecond)
		tl.step(ctx, 10*time.Millisecond)
		assert.Equal(t, 1056*time.Millisecond, clk.Since(start), "after idle the step starts now")
	})
}

// TestGenThroughputOverScheduledTime checks that the logged generation rate counts the steps'
// scheduled time: 400 tokens over steps that end 1 s after the previous log read 400 tokens/s
// even when the loop ran them back to back to catch up a lag, in almost no clock time.
func TestGenThroughputOverScheduledTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		e, err := NewEngine(clk, DSV4PD(), nil)
		if err != nil {
			t.Fatal(err)
		}
		start := clk.Now()
		e.logDecode(start, 1, 0)
		e.stats.generated.Add(400)
		time.Sleep(time.Millisecond) // the clock barely moves while the steps catch up
		e.logDecode(start.Add(time.Second), 1, 0)
		assert.InDelta(t, 400, e.Stats().Logged.GenThroughput, 1e-9, "tokens per scheduled second")

		e.logDecode(clk.Now(), 0, 0)
		assert.Zero(t, e.Stats().Logged.GenThroughput, "an idle decode engine generates nothing")
	})
}

// TestTimelineLate checks what the timeline reports after each step: when the model says the
// step ended (due) and how much later it is ending (late) — the loop's own work between steps
// while it catches up, and the lag it forgives, which moves the schedule but not the model.
func TestTimelineLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		start := clk.Now()
		tl := timeline{clk: clk}
		ctx := context.Background()
		assert.Zero(t, tl.late(), "an idle loop is not late")
		tl.step(ctx, 10*time.Millisecond)
		assert.Equal(t, start.Add(10*time.Millisecond), tl.due())
		assert.Zero(t, tl.late(), "on schedule")

		time.Sleep(15 * time.Millisecond) // the loop's own work: 5 ms past the next step's end
		tl.step(ctx, 10*time.Millisecond)
		assert.Equal(t, start.Add(20*time.Millisecond), tl.due())
		assert.Equal(t, 5*time.Millisecond, tl.late(), "run back to back, 5 ms late")

		time.Sleep(time.Second) // beyond maxLagWall: forgiven, the schedule restarts from now
		tl.step(ctx, 10*time.Millisecond)
		assert.Equal(t, start.Add(30*time.Millisecond), tl.due(), "the model's end of the step")
		assert.Equal(t, 1005*time.Millisecond, tl.late(), "the forgiven lag is still late")

		tl.step(ctx, 10*time.Millisecond)
		assert.Zero(t, tl.late(), "the next step is on the new schedule")
		tl.reset()
		assert.Zero(t, tl.late())
	})
}
