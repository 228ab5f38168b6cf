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
