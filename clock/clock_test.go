package clock

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSleepScalesWithSpeedup(t *testing.T) {
	for _, speedup := range []float64{1, 20, 1000} {
		synctest.Test(t, func(t *testing.T) {
			c, err := New(speedup)
			require.NoError(t, err)
			wall := time.Now()
			require.NoError(t, c.Sleep(t.Context(), 10*time.Second))
			assert.Equal(t, time.Duration(float64(10*time.Second)/speedup), time.Since(wall),
				"wall time for a 10s simulated sleep at speedup %v", speedup)
			assert.InDelta(t, 10.0, c.Elapsed().Seconds(), 1e-6, "simulated elapsed at speedup %v", speedup)
		})
	}
}

func TestSleepCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := Real()
		ctx, cancel := context.WithCancel(t.Context())
		c.AfterFunc(time.Second, cancel)
		err := c.Sleep(ctx, time.Hour)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, time.Second, c.Elapsed())
	})
}

func TestTimerAndTickerUseSimulatedDurations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := New(10)
		require.NoError(t, err)
		tm := c.NewTimer(5 * time.Second)
		<-tm.C
		assert.Equal(t, 5*time.Second, c.Elapsed())
		tm.Reset(5 * time.Second)
		<-tm.C
		assert.Equal(t, 10*time.Second, c.Elapsed())

		tk := c.NewTicker(2 * time.Second)
		defer tk.Stop()
		<-tk.C
		<-tk.C
		assert.Equal(t, 14*time.Second, c.Elapsed())
	})
}

func TestValidateSpeedup(t *testing.T) {
	for _, s := range []float64{0, 0.5, -1, 2e6} {
		_, err := New(s)
		assert.Error(t, err, "New(%v)", s)
	}
	_, err := New(1)
	assert.NoError(t, err)
}

// TestAfterInstantRunsAfterTheInstant checks that, in a bubble, a call AfterInstant schedules
// runs only once every goroutine woken at the present instant has run: a goroutine that yields
// many times before it records still records first.
func TestAfterInstantRunsAfterTheInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := New(1000)
		require.NoError(t, err)
		var mu sync.Mutex
		var order []string
		record := func(s string) {
			mu.Lock()
			order = append(order, s)
			mu.Unlock()
		}
		clk.AfterInstant(func() { record("after") })
		go func() {
			for range 1000 {
				runtime.Gosched()
			}
			record("instant")
		}()
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, []string{"instant"}, order, "not within the instant")
		mu.Unlock()
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, []string{"instant", "after"}, order, "a nanosecond later, whatever the speedup")
	})
}
