package clock

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// timebase is the mapping from wall time to simulated time that a Clock and the clocks
// Measured makes from it share. The mapping is piecewise linear: from the wall instant of its
// present anchor it runs at the anchor's speedup. SetSpeedup starts a new piece where the last
// one is now, so simulated time stays continuous and never goes back, and moves every armed
// wait — a Sleep, Timer, AfterFunc or Ticker of an Adjustable clock — to the wall deadline
// that keeps its simulated one.
type timebase struct {
	wallStart  time.Time // wall reading (with monotonic part) when the clock was created
	adjustable bool
	rate       atomic.Pointer[anchor]
	// latest is the largest Elapsed returned, in nanoseconds (Adjustable clocks only): a
	// reader that loaded the anchor just before a slow-down would otherwise compute a simulated
	// time past the new piece's.
	latest atomic.Int64

	mu    sync.Mutex           // guards armed and the re-anchoring of rate
	armed map[*waiter]struct{} // the waits to move when the speedup changes
}

// anchor is one piece of the mapping: simulated time sim at wall instant wall, speedup after.
type anchor struct {
	wall    time.Time
	sim     time.Duration
	speedup float64
}

// waiter is an armed wait of an Adjustable clock: when it is due in simulated time since the
// clock's start, or the period of a ticker, and the time.Timer or time.Ticker that stands for
// it in wall time.
type waiter struct {
	due    time.Duration
	period time.Duration // a ticker's; 0 for a timer
	timer  *time.Timer
	ticker *time.Ticker
}

func newTimebase(speedup float64, adjustable bool) *timebase {
	now := time.Now()
	b := &timebase{wallStart: now, adjustable: adjustable}
	b.rate.Store(&anchor{wall: now, speedup: speedup})
	if adjustable {
		b.armed = make(map[*waiter]struct{})
	}
	return b
}

// elapsed is the simulated time since the clock's start.
func (b *timebase) elapsed() time.Duration {
	a := b.rate.Load()
	e := a.sim + toSim(time.Since(a.wall), a.speedup)
	if !b.adjustable {
		return e
	}
	raise(&b.latest, int64(e))
	return max(e, time.Duration(b.latest.Load()))
}

// arm records w as due after the simulated duration d (for a ticker, every d) and calls set
// with the wall duration that takes at the present speedup, to create or reset the wall timer,
// all under the lock SetSpeedup takes, so that a change of speedup sees the wait either
// before (and moves it) or after (and it was armed at the new speedup).
func (b *timebase) arm(w *waiter, d time.Duration, set func(wall time.Duration)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w.due = b.elapsed() + max(d, 0)
	set(toWall(d, b.rate.Load().speedup))
	b.armed[w] = struct{}{}
}

// disarm forgets w: it was stopped or has fired.
func (b *timebase) disarm(w *waiter) {
	b.mu.Lock()
	delete(b.armed, w)
	b.mu.Unlock()
}

// SetSpeedup changes the speedup of an Adjustable clock from now on: simulated time goes on
// from its present value at the new rate, and every armed wait of the clock (and of the
// clocks Measured made from it) fires at the simulated time it was due — a wait whose wall
// deadline moves earlier is woken then. speedup must be allowed by ValidateSpeedup; a clock
// not made by Adjustable refuses any change.
func (c *Clock) SetSpeedup(speedup float64) error {
	if err := ValidateSpeedup(speedup); err != nil {
		return err
	}
	b := c.base
	if !b.adjustable {
		return fmt.Errorf("the clock's speedup is fixed at %g: only a clock made by clock.Adjustable may change it", b.rate.Load().speedup)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	old := b.rate.Load()
	sim := max(old.sim+toSim(now.Sub(old.wall), old.speedup), time.Duration(b.latest.Load()))
	b.rate.Store(&anchor{wall: now, sim: sim, speedup: speedup})
	for w := range b.armed {
		switch {
		case w.ticker != nil:
			w.ticker.Reset(max(toWall(w.period, speedup), time.Nanosecond))
		case w.timer.Stop():
			w.timer.Reset(toWall(w.due-sim, speedup))
		default: // fired, or stopped by its owner's time.Timer: nothing left to move
			delete(b.armed, w)
		}
	}
	return nil
}

// Adjusts reports whether c was made by Adjustable: whether SetSpeedup may change its speedup.
func (c *Clock) Adjusts() bool { return c.base.adjustable }
