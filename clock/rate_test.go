package clock

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sleep armed before a change of speedup ends at the simulated time it was due, and the
// wall time it takes follows the rate of each piece.
func TestSetSpeedupMovesArmedSleep(t *testing.T) {
	for _, next := range []float64{100, 2} { // faster, then slower
		synctest.Test(t, func(t *testing.T) {
			c, err := Adjustable(10)
			require.NoError(t, err)
			wall := time.Now()
			done := make(chan time.Duration)
			go func() {
				_ = c.Sleep(t.Context(), 100*time.Second)
				done <- c.Elapsed()
			}()
			time.Sleep(2 * time.Second) // 20 s simulated
			before := c.Elapsed()
			require.NoError(t, c.SetSpeedup(next))
			assert.Equal(t, before, c.Elapsed(), "simulated time is continuous at the change")
			ended := <-done
			assert.InDelta(t, 100.0, ended.Seconds(), 1e-6, "the sleep ends when it was due, in simulated time")
			want := 2*time.Second + time.Duration(float64(80*time.Second)/next)
			assert.InDelta(t, want.Seconds(), time.Since(wall).Seconds(), 1e-6, "wall time at speedup %v after the change", next)
		})
	}
}

// Timers, AfterFunc calls and tickers keep their simulated deadlines and period across a
// change, and a stopped timer is not woken by one.
func TestSetSpeedupMovesTimersAndTickers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := Adjustable(10)
		require.NoError(t, err)
		m := c.Measured()
		timer := m.NewTimer(50 * time.Second)
		var calledAt atomic.Int64
		c.AfterFunc(30*time.Second, func() { calledAt.Store(int64(c.Elapsed())) })
		stopped := c.NewTimer(40 * time.Second)
		stopped.Stop()
		tick := c.NewTicker(10 * time.Second)
		defer tick.Stop()
		<-tick.C // 10 s simulated
		require.NoError(t, c.SetSpeedup(1000))
		<-tick.C
		assert.InDelta(t, 20.0, c.Elapsed().Seconds(), 0.1, "the ticker's next tick, 10 s simulated on")
		<-timer.C
		assert.InDelta(t, 50.0, c.Elapsed().Seconds(), 1e-6, "the timer fires when it was due")
		assert.InDelta(t, 30.0, time.Duration(calledAt.Load()).Seconds(), 1e-6, "AfterFunc runs when it was due")
		select {
		case <-stopped.C:
			t.Fatal("a stopped timer fired after a change of speedup")
		default:
		}
	})
}

// A clock made by New refuses a change, and an adjustable one a speedup out of range.
func TestSetSpeedupRefused(t *testing.T) {
	c, err := New(10)
	require.NoError(t, err)
	assert.ErrorContains(t, c.SetSpeedup(20), "fixed at 10")
	a, err := Adjustable(10)
	require.NoError(t, err)
	assert.ErrorContains(t, a.SetSpeedup(0.5), "not allowed")
	assert.Equal(t, 10.0, a.Speedup())
}

// A window sees only what was recorded since the one before.
func TestLagWindow(t *testing.T) {
	var l Lag
	l.Record(time.Second)
	w := l.Window()
	assert.Equal(t, LagStats{}, w.Next(), "nothing since the window began")
	for range 99 {
		l.Record(time.Millisecond)
	}
	l.Record(2 * time.Second)
	s := w.Next()
	assert.Equal(t, int64(100), s.N)
	assert.InDelta(t, 0.001, s.P50.Seconds(), 0.000125)
	assert.InDelta(t, 2.0, s.Max.Seconds(), 0.25)
	assert.Equal(t, int64(0), w.Next().N)
}

// A wait shorter than a nanosecond of wall time at the speedup still ends at or after its
// simulated instant: a loop that waits for that instant until the clock reaches it (the
// engine's timed events) ends, where a wait truncated to no wall time ended where it began,
// and the loop spun at one instant without end.
func TestShortWaitReachesItsInstant(t *testing.T) {
	for _, adjustable := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			newClock := New
			if adjustable {
				newClock = Adjustable
			}
			c, err := newClock(10000)
			require.NoError(t, err)
			due := c.Now().Add(7 * time.Microsecond)
			rounds := 0
			for c.Now().Before(due) && rounds < 100 {
				require.NoError(t, c.Sleep(t.Context(), due.Sub(c.Now())))
				rounds++
			}
			assert.False(t, c.Now().Before(due), "the clock reached the instant waited for (adjustable %v)", adjustable)
			assert.Equal(t, 1, rounds, "one wait reaches it")
		})
	}
}
