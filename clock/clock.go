// Package clock is agentsim's single source of time.
//
// Every package that waits or timestamps takes a *Clock instead of calling time.Now or
// time.Sleep. A Clock maps simulated durations onto wall time with a constant speedup: with
// Speedup 20, a simulated 20 s step sleeps 1 s of wall time. Because the Clock is built on the
// time package, a testing/synctest bubble virtualises it too, so virtual-time tests and
// --speedup runs execute exactly the same code as a real run.
package clock

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Clock reports simulated time and waits for simulated durations. The zero value is not
// usable; create one with New. A Clock is safe for concurrent use.
type Clock struct {
	speedup   float64
	wallStart time.Time // wall reading (with monotonic part) when the clock was created
	lag       *Lag      // where waits record their lateness; nil: not measured
}

// New returns a Clock whose simulated time starts now and runs speedup times faster than wall
// time. speedup must be finite and at least 1.
func New(speedup float64) (*Clock, error) {
	if err := ValidateSpeedup(speedup); err != nil {
		return nil, err
	}
	return &Clock{speedup: speedup, wallStart: time.Now()}, nil
}

// Measured returns a Clock with the same time base and speedup as c whose waits — Sleep, and
// the Timer and Ticker ticks passed to Fired — record how late they end in a Lag of its own,
// returned by its Lag method. Waits made through c itself are not recorded there.
func (c *Clock) Measured() *Clock {
	return &Clock{speedup: c.speedup, wallStart: c.wallStart, lag: new(Lag)}
}

// Lag returns the lag this clock's waits record into, or nil when c was not made by Measured.
func (c *Clock) Lag() *Lag { return c.lag }

// Fired records, on a Measured clock, how late a tick of one of its Timers or Tickers is being
// handled: due is the value received from the timer's channel, which the runtime stamps with
// the time the tick was due. On other clocks it does nothing.
func (c *Clock) Fired(due time.Time) {
	if c.lag != nil {
		c.lag.Record(c.ToSim(time.Since(due)))
	}
}

// Real returns a Clock with speedup 1: simulated time is wall time.
func Real() *Clock {
	return &Clock{speedup: 1, wallStart: time.Now()}
}

// ValidateSpeedup reports whether speedup is an allowed factor (finite, ≥ 1, ≤ 1e6).
func ValidateSpeedup(speedup float64) error {
	if math.IsNaN(speedup) || math.IsInf(speedup, 0) || speedup < 1 || speedup > 1e6 {
		return fmt.Errorf("speedup %v is not allowed: want a number from 1 to 1000000", speedup)
	}
	return nil
}

// Speedup is how many simulated seconds pass per wall second.
func (c *Clock) Speedup() float64 { return c.speedup }

// Now returns the current simulated time. At speedup 1 it equals the wall clock.
func (c *Clock) Now() time.Time {
	return c.wallStart.Add(c.Elapsed())
}

// Elapsed returns the simulated time since the clock was created.
func (c *Clock) Elapsed() time.Duration {
	return c.ToSim(time.Since(c.wallStart))
}

// Since returns the simulated time elapsed since t, a value previously returned by Now.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// WallNow returns the wall-clock time, for human-readable timestamps only.
func (c *Clock) WallNow() time.Time { return time.Now() }

// ToWall converts a simulated duration to the wall duration it takes.
func (c *Clock) ToWall(sim time.Duration) time.Duration {
	if c.speedup == 1 || sim <= 0 {
		return sim
	}
	return time.Duration(float64(sim) / c.speedup)
}

// ToSim converts a wall duration to the simulated duration that passes meanwhile.
func (c *Clock) ToSim(wall time.Duration) time.Duration {
	if c.speedup == 1 {
		return wall
	}
	return time.Duration(float64(wall) * c.speedup)
}

// Sleep waits for the simulated duration d or until ctx is done, whichever comes first, and
// returns ctx.Err() in the second case. On a Measured clock a sleep that ran its course records
// how late it returned.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(c.ToWall(d))
	defer t.Stop()
	select {
	case due := <-t.C:
		c.Fired(due)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Timer is a time.Timer whose durations are simulated.
type Timer struct {
	*time.Timer
	c *Clock
}

// NewTimer returns a Timer that fires after the simulated duration d.
func (c *Clock) NewTimer(d time.Duration) *Timer {
	return &Timer{Timer: time.NewTimer(c.ToWall(d)), c: c}
}

// Reset changes the timer to fire after the simulated duration d.
func (t *Timer) Reset(d time.Duration) bool { return t.Timer.Reset(t.c.ToWall(d)) }

// AfterInstant calls f in its own goroutine once the present instant is over: after the
// shortest wait a timer makes, one nanosecond of wall time, whatever the speedup. In a
// testing/synctest bubble every goroutine woken at the present instant has run and blocked by
// then, so f sees the state the instant ended in, whatever order those goroutines ran in; in
// real time it runs at once. The returned timer's Stop cancels the call if it has not started.
func (c *Clock) AfterInstant(f func()) *time.Timer { return time.AfterFunc(time.Nanosecond, f) }

// AfterFunc calls f in its own goroutine after the simulated duration d. The returned timer's
// Stop cancels the call if it has not started. Its lag is not measured: the timer may be Reset
// to another due time.
func (c *Clock) AfterFunc(d time.Duration, f func()) *time.Timer {
	return time.AfterFunc(c.ToWall(d), f)
}

// Ticker is a time.Ticker whose period is simulated.
type Ticker struct {
	*time.Ticker
	c *Clock
}

// NewTicker returns a Ticker with the simulated period d (d > 0).
func (c *Clock) NewTicker(d time.Duration) *Ticker {
	w := c.ToWall(d)
	if w <= 0 {
		w = time.Nanosecond
	}
	return &Ticker{Ticker: time.NewTicker(w), c: c}
}

// Reset changes the ticker's simulated period.
func (t *Ticker) Reset(d time.Duration) { t.Ticker.Reset(max(t.c.ToWall(d), time.Nanosecond)) }

// WithTimeout is context.WithTimeout for a simulated duration.
func (c *Clock) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.ToWall(d))
}
