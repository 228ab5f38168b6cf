package clock

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLagBucketsBoundTheirValues(t *testing.T) {
	for _, us := range []uint64{0, 1, 7, 8, 9, 15, 16, 17, 100, 1000, 12345, 1 << 20, 1<<40 + 3} {
		b := lagBucket(us)
		assert.Greater(t, lagUpper(b), us, "upper bound of the bucket of %d µs", us)
		if b > 0 {
			assert.LessOrEqual(t, lagUpper(b-1), us, "upper bound of the bucket below %d µs", us)
		}
		assert.LessOrEqual(t, float64(lagUpper(b)), float64(us)*1.125+1, "bucket of %d µs is within 12.5 %%", us)
	}
	assert.Less(t, lagBucket(uint64(time.Duration(1<<63-1)/time.Microsecond)), lagBuckets)
}

func TestLagStatsQuantiles(t *testing.T) {
	var l Lag
	assert.Equal(t, LagStats{}, l.Stats(), "no observations")
	for i := range 100 {
		l.Record(time.Duration(i+1) * time.Millisecond) // 1 ms … 100 ms
	}
	l.Record(-time.Second) // counts as 0
	s := l.Stats()
	assert.Equal(t, int64(101), s.N)
	assert.Equal(t, 100*time.Millisecond, s.Max)
	assert.InDelta(t, 50e-3, s.P50.Seconds(), 50e-3*0.125, "p50")
	assert.InDelta(t, 99e-3, s.P99.Seconds(), 99e-3*0.125, "p99")
	assert.LessOrEqual(t, s.P99, s.Max, "p99 is capped at max")
	assert.Equal(t, 100*time.Millisecond, l.RecentMax(), "read without ending the period")
	assert.Equal(t, 100*time.Millisecond, l.TakeRecentMax())
	assert.Zero(t, l.TakeRecentMax(), "a new period starts empty")
	assert.Zero(t, l.RecentMax())
}

func TestMeasuredClockRecordsLateness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base, err := New(10)
		require.NoError(t, err)
		c := base.Measured()
		assert.Nil(t, base.Lag(), "the base clock measures nothing")
		assert.Equal(t, base.Now(), c.Now(), "same time base")

		// In a bubble, waits end exactly when due.
		require.NoError(t, c.Sleep(t.Context(), 3*time.Second))
		s := c.Lag().Stats()
		assert.Equal(t, int64(1), s.N)
		assert.Zero(t, s.Max)

		// A tick handled 50 ms of wall time after it was due is 0.5 s late at speedup 10.
		tm := c.NewTimer(time.Second)
		time.Sleep(150 * time.Millisecond) // the timer was due at 100 ms of wall time
		c.Fired(<-tm.C)
		s = c.Lag().Stats()
		assert.Equal(t, int64(2), s.N)
		assert.Equal(t, 500*time.Millisecond, s.Max)

		// Interrupted sleeps record nothing.
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		assert.Error(t, c.Sleep(ctx, time.Second))
		assert.Equal(t, int64(2), c.Lag().Stats().N)
		base.Fired(time.Now().Add(-time.Hour)) // not measured: no effect, no panic
	})
}

// TestLagRaise checks that Raise moves only the recent maximum: the distribution of waits and
// its maximum are the waits' alone, and a nil Lag ignores it.
func TestLagRaise(t *testing.T) {
	var l Lag
	l.Record(time.Millisecond)
	l.Raise(2 * time.Second)
	l.Raise(time.Second)
	assert.Equal(t, 2*time.Second, l.TakeRecentMax())
	assert.Zero(t, l.TakeRecentMax(), "a new period")
	st := l.Stats()
	assert.EqualValues(t, 1, st.N)
	assert.Less(t, st.Max, 2*time.Millisecond)
	var none *Lag
	assert.NotPanics(t, func() { none.Raise(time.Second) })
}
