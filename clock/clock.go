// Package clock is agentsim's single source of time.
//
// Every package that waits or timestamps takes a *Clock instead of calling time.Now or
// time.Sleep. A Clock maps simulated durations onto wall time with a speedup: with Speedup 20,
// a simulated 20 s step sleeps 1 s of wall time. The speedup of a clock made by New is
// constant; that of a clock made by Adjustable may change while it runs (SetSpeedup), and
// simulated time then goes on from where it was, at the new rate (docs/speed.md). Because the
// Clock is built on the time package, a testing/synctest bubble virtualises it too, so
// virtual-time tests and --speedup runs execute exactly the same code as a real run.
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
	base *timebase // shared by the clocks Measured makes from this one
	lag  *Lag      // where waits record their lateness; nil: not measured
}

// New returns a Clock whose simulated time starts now and runs speedup times faster than wall
// time. speedup must be finite and at least 1.
func New(speedup float64) (*Clock, error) {
	if err := ValidateSpeedup(speedup); err != nil {
		return nil, err
	}
	return &Clock{base: newTimebase(speedup, false)}, nil
}

// Adjustable returns a Clock like New's whose speedup SetSpeedup may change while it runs.
func Adjustable(speedup float64) (*Clock, error) {
	if err := ValidateSpeedup(speedup); err != nil {
		return nil, err
	}
	return &Clock{base: newTimebase(speedup, true)}, nil
}

// Measured returns a Clock with the same time base and speedup as c whose waits — Sleep, and
// the Timer and Ticker ticks passed to Fired — record how late they end in a Lag of its own,
// returned by its Lag method. Waits made through c itself are not recorded there. A change of
// speedup on either clock applies to both.
func (c *Clock) Measured() *Clock {
	return &Clock{base: c.base, lag: new(Lag)}
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
	return &Clock{base: newTimebase(1, false)}
}

// ValidateSpeedup reports whether speedup is an allowed factor (finite, ≥ 1, ≤ 1e6).
func ValidateSpeedup(speedup float64) error {
	if math.IsNaN(speedup) || math.IsInf(speedup, 0) || speedup < 1 || speedup > 1e6 {
		return fmt.Errorf("speedup %v is not allowed: want a number from 1 to 1000000", speedup)
	}
	return nil
}

// Speedup is how many simulated seconds pass per wall second, now.
func (c *Clock) Speedup() float64 { return c.base.rate.Load().speedup }

// Now returns the current simulated time. At speedup 1 it equals the wall clock.
func (c *Clock) Now() time.Time {
	return c.base.wallStart.Add(c.Elapsed())
}

// Elapsed returns the simulated time since the clock was created.
func (c *Clock) Elapsed() time.Duration { return c.base.elapsed() }

// Since returns the simulated time elapsed since t, a value previously returned by Now.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// WallNow returns the wall-clock time, for human-readable timestamps only.
func (c *Clock) WallNow() time.Time { return time.Now() }

// ToWall converts a simulated duration to the wall duration it takes.
// at the present speedup.
func (c *Clock) ToWall(sim time.Duration) time.Duration {
	return toWall(sim, c.Speedup())
}

// ToSim converts a wall duration to the simulated duration that passes meanwhile at the
// present speedup.
func (c *Clock) ToSim(wall time.Duration) time.Duration {
	return toSim(wall, c.Speedup())
}

// toWall converts a simulated duration to wall time at speedup s; a positive one takes at
// least a nanosecond. A wait of a few simulated nanoseconds at a high speedup, truncated to
// no wall time, would end where it began, before its simulated instant, to be armed again for
// the same instant, round after round.
func toWall(sim time.Duration, s float64) time.Duration {
	if s == 1 || sim <= 0 {
		return sim
	}
	return max(time.Duration(float64(sim)/s), time.Nanosecond)
}

// toSim converts a wall duration to simulated time at speedup s.
func toSim(wall time.Duration, s float64) time.Duration {
	if s == 1 {
		return wall
	}
	return time.Duration(float64(wall) * s)
}

// Sleep waits for the simulated duration d or until ctx is done, whichever comes first, and
// returns ctx.Err() in the second case. On a Measured clock a sleep that ran its course records
// how late it returned.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case due := <-t.C:
		c.Fired(due)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Timer is a time.Timer whose durations are simulated. On an Adjustable clock a change of
// speedup moves its wall deadline so that it fires at the same simulated time.
type Timer struct {
	*time.Timer
	c *Clock
	w *waiter // on an Adjustable clock; nil otherwise
}

// NewTimer returns a Timer that fires after the simulated duration d.
func (c *Clock) NewTimer(d time.Duration) *Timer {
	if !c.base.adjustable {
		return &Timer{Timer: time.NewTimer(c.ToWall(d)), c: c}
	}
	t := &Timer{c: c, w: &waiter{}}
	c.base.arm(t.w, d, func(wall time.Duration) { t.Timer = time.NewTimer(wall); t.w.timer = t.Timer })
	return t
}

// Reset changes the timer to fire after the simulated duration d.
func (t *Timer) Reset(d time.Duration) bool {
	if t.w == nil {
		return t.Timer.Reset(t.c.ToWall(d))
	}
	var active bool
	t.c.base.arm(t.w, d, func(wall time.Duration) { active = t.Timer.Reset(wall) })
	return active
}

// Stop prevents the timer from firing; it returns false if it had already fired or been
// stopped.
func (t *Timer) Stop() bool {
	if t.w != nil {
		t.c.base.disarm(t.w)
	}
	return t.Timer.Stop()
}

// AfterInstant calls f in its own goroutine once the present instant is over: after the
// shortest wait a timer makes, one nanosecond of wall time, whatever the speedup. In a
// testing/synctest bubble every goroutine woken at the present instant has run and blocked by
// then, so f sees the state the instant ended in, whatever order those goroutines ran in; in
// real time it runs at once. The returned timer's Stop cancels the call if it has not started.
func (c *Clock) AfterInstant(f func()) *time.Timer { return time.AfterFunc(time.Nanosecond, f) }

// AfterFunc calls f in its own goroutine after the simulated duration d. The returned timer's
// Stop cancels the call if it has not started, and its Reset (a simulated duration) schedules
// it again. Its lag is not measured: the timer may be Reset to another due time.
func (c *Clock) AfterFunc(d time.Duration, f func()) *Timer {
	if !c.base.adjustable {
		return &Timer{Timer: time.AfterFunc(c.ToWall(d), f), c: c}
	}
	t := &Timer{c: c, w: &waiter{}}
	fire := func() {
		c.base.disarm(t.w)
		f()
	}
	c.base.arm(t.w, d, func(wall time.Duration) { t.Timer = time.AfterFunc(wall, fire); t.w.timer = t.Timer })
	return t
}

// Ticker is a time.Ticker whose period is simulated. On an Adjustable clock a change of
// speedup changes its wall period to keep the simulated one.
type Ticker struct {
	*time.Ticker
	c *Clock
	w *waiter // on an Adjustable clock; nil otherwise
}

// NewTicker returns a Ticker with the simulated period d (d > 0).
func (c *Clock) NewTicker(d time.Duration) *Ticker {
	if !c.base.adjustable {
		return &Ticker{Ticker: time.NewTicker(max(c.ToWall(d), time.Nanosecond)), c: c}
	}
	t := &Ticker{c: c, w: &waiter{period: d}}
	c.base.arm(t.w, d, func(wall time.Duration) { t.Ticker = time.NewTicker(max(wall, time.Nanosecond)); t.w.ticker = t.Ticker })
	return t
}

// Reset changes the ticker's simulated period.
func (t *Ticker) Reset(d time.Duration) {
	if t.w == nil {
		t.Ticker.Reset(max(t.c.ToWall(d), time.Nanosecond))
		return
	}
	t.c.base.arm(t.w, d, func(wall time.Duration) { t.w.period = d; t.Ticker.Reset(max(wall, time.Nanosecond)) })
}

// Stop turns the ticker off.
func (t *Ticker) Stop() {
	if t.w != nil {
		t.c.base.disarm(t.w)
	}
	t.Ticker.Stop()
}

// WithTimeout is context.WithTimeout for a simulated duration. Its deadline is set in wall
// time at the speedup of the moment: on an Adjustable clock a later change of speedup does not
// move it (it serves short graces, not the simulation's own waits).
func (c *Clock) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.ToWall(d))
}
