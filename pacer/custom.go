package pacer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentsim/agentsim/clock"
)

// Decider is the decision of a pacer design written outside this package: NewCustom turns it
// into a Pacer that does the waiting, the permits and the bookkeeping Stats reports (held
// permits, blocked calls, totals), so a diagnosis sees a custom design as it sees a built-in
// one.
//
// Custom calls a Decider's methods one at a time, never concurrently, so a Decider needs no
// lock of its own; they must not block. Every time is simulated.
type Decider interface {
	// Admit decides whether req may be sent at now, while the permits in held (oldest
	// first; len(held) requests in flight) are held. When it may not, retryAfter > 0 asks
	// Custom to ask again that much later (simulated time); whatever retryAfter says, Custom
	// asks again as soon as a request ends. Only the oldest blocked request is asked, so
	// requests go first come, first served.
	Admit(now time.Time, req Demand, held []Holding) (ok bool, retryAfter time.Duration)
	// Released tells the decider that the request holding p ended at now with outcome o.
	Released(now time.Time, p Holding, o Outcome)
	// String describes the design and its parameters, e.g. "Spaced{4, gap 2s}".
	String() string
}

// Limiter is implemented by a Decider that has a concurrency limit; Custom's Stats.Limit
// reports it (0 otherwise).
type Limiter interface {
	// Limit is the current concurrency limit, 0 when unbounded.
	Limit() int
}

// Custom is a pacer whose decision is a Decider: a design of the caller's own with the same
// permits and Stats as the built-in ones. Build it with NewCustom.
type Custom struct {
	clk *clock.Clock
	led ledger

	mu      sync.Mutex
	d       Decider
	queue   chain[struct{}] // blocked Acquire calls, oldest first; only the head asks
	changed chan struct{}   // closed and replaced when a request ends or the head changes
}

var _ Pacer = (*Custom)(nil)

// NewCustom returns a pacer that admits requests as d decides, waiting on clk.
func NewCustom(d Decider, clk *clock.Clock) (*Custom, error) {
	if d == nil {
		return nil, errors.New("pacer: nil Decider")
	}
	if clk == nil {
		return nil, errors.New("pacer: nil clock")
	}
	c := &Custom{clk: clk, d: d, changed: make(chan struct{})}
	c.led = ledger{clk: clk, onReleasePermit: c.released}
	return c, nil
}

// Acquire waits until the Decider admits req, in arrival order, or ctx is done.
func (c *Custom) Acquire(ctx context.Context, req Demand) (*Permit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	var retry time.Duration
	if c.queue.n == 0 {
		var ok bool
		if ok, retry = c.d.Admit(c.clk.Now(), req, c.heldLocked()); ok {
			p := c.led.issue(req, nil) // under c.mu: the next Admit sees it held
			c.mu.Unlock()
			return p, nil
		}
	}
	w := c.led.beginWait()
	me := &link[struct{}]{}
	c.queue.pushBack(me)
	for {
		changed := c.changed
		c.mu.Unlock()
		if err := c.await(ctx, changed, retry); err != nil {
			c.mu.Lock()
			c.leaveLocked(me)
			c.mu.Unlock()
			c.led.abandon(w)
			return nil, err
		}
		c.mu.Lock()
		retry = 0
		if c.queue.head != me {
			continue
		}
		var ok bool
		if ok, retry = c.d.Admit(c.clk.Now(), req, c.heldLocked()); ok {
			c.leaveLocked(me)
			p := c.led.issue(req, w)
			c.mu.Unlock()
			return p, nil
		}
	}
}

// heldLocked lists the held permits, oldest first. Admitted permits are issued under c.mu, so
// the list is complete whenever the Decider is asked.
func (c *Custom) heldLocked() []Holding { return c.led.stats(0).Held }

// await blocks until changed is closed, retry (if > 0) has passed or ctx is done.
func (c *Custom) await(ctx context.Context, changed <-chan struct{}, retry time.Duration) error {
	var due <-chan time.Time
	if retry > 0 {
		t := c.clk.NewTimer(retry)
		defer t.Stop()
		due = t.C
	}
	select {
	case <-changed:
	case <-due:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// leaveLocked removes a waiter from the queue; the next one, if it is now the head, asks.
func (c *Custom) leaveLocked(me *link[struct{}]) {
	head := c.queue.head == me
	c.queue.remove(me)
	if head {
		c.wakeLocked()
	}
}

// wakeLocked wakes every blocked call to look again.
func (c *Custom) wakeLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// released hands a released permit to the Decider and wakes the waiters.
func (c *Custom) released(p *Permit, o Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d.Released(c.clk.Now(), Holding{PermitID: p.ID, Agent: p.Agent, Since: p.AcquiredAt}, o)
	c.wakeLocked()
}

// String returns the Decider's description.
func (c *Custom) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.d.String()
}

// Stats returns a snapshot; Limit is the Decider's when it is a Limiter.
func (c *Custom) Stats() Stats {
	limit := 0
	c.mu.Lock()
	if l, ok := c.d.(Limiter); ok {
		limit = l.Limit()
	}
	c.mu.Unlock()
	return c.led.stats(limit)
}
