package pacer

import (
	"sync"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// ledger is the bookkeeping every design shares: permit IDs, held permits, blocked Acquire
// calls, totals, and the leak_on_timeout switch. Designs embed one and call beginWait, abandon,
// issue; Permit.Release calls release, which hands the permit back to the design through
// onRelease unless the permit leaks.
type ledger struct {
	clk           *clock.Clock
	leakOnTimeout bool
	// onRelease returns a released permit to the design; nil when the design keeps nothing
	// per permit (unlimited, rate, tpm). Called without mu held.
	onRelease func(Outcome)
	// onReleasePermit, when set, is onRelease for a design that needs to know which permit
	// ended (Custom). Called without mu held, after onRelease.
	onReleasePermit func(*Permit, Outcome)

	mu       sync.Mutex
	lastID   uint64
	held     chain[*Permit]   // held permits, oldest first
	waits    chain[time.Time] // start times of blocked Acquire calls, oldest first
	acquired int
	released int
	leaked   int
}

func newLedger(cfg Config, clk *clock.Clock, onRelease func(Outcome)) ledger {
	return ledger{clk: clk, leakOnTimeout: cfg.LeakOnTimeout, onRelease: onRelease}
}

// beginWait records that an Acquire call is about to block. The caller ends the wait with
// exactly one of issue or abandon.
func (l *ledger) beginWait() *linkTime {
	w := &link[time.Time]{}
	l.mu.Lock()
	w.v = l.clk.Now() // read under mu so that waits stays ordered by start time
	l.waits.pushBack(w)
	l.mu.Unlock()
	return w
}

// abandon ends a wait that obtained nothing.
func (l *ledger) abandon(w *linkTime) {
	l.mu.Lock()
	l.waits.remove(w)
	l.mu.Unlock()
}

// issue creates the permit for a request the design has just admitted, ending its wait w
// (nil if it did not block) in the same critical section so Stats never sees it in neither.
func (l *ledger) issue(req Demand, w *linkTime) *Permit {
	p := &Permit{Agent: req.Agent, led: l}
	p.link.v = p
	l.mu.Lock()
	if w != nil {
		l.waits.remove(w)
	}
	l.lastID++
	p.ID = l.lastID
	p.AcquiredAt = l.clk.Now()
	l.held.pushBack(&p.link)
	l.acquired++
	l.mu.Unlock()
	return p
}

// release implements Permit.Release.
func (l *ledger) release(p *Permit, o Outcome) {
	l.mu.Lock()
	if p.released {
		l.mu.Unlock()
		return
	}
	p.released = true
	if l.leakOnTimeout && o.Kind == events.RequestTimeout {
		// The buggy release path: the permit stays held and the design never hears of it.
		l.leaked++
		l.mu.Unlock()
		return
	}
	l.held.remove(&p.link)
	l.released++
	l.mu.Unlock()
	if l.onRelease != nil {
		l.onRelease(o)
	}
	if l.onReleasePermit != nil {
		l.onReleasePermit(p, o)
	}
}

// stats snapshots the bookkeeping; limit is the design's current concurrency limit.
func (l *ledger) stats(limit int) Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Stats{
		InUse:    l.held.n,
		Waiting:  l.waits.n,
		Acquired: l.acquired,
		Released: l.released,
		Leaked:   l.leaked,
		Limit:    limit,
		Held:     make([]Holding, 0, l.held.n),
	}
	if l.waits.head != nil {
		s.LongestWait = max(l.clk.Now().Sub(l.waits.head.v), 0)
	}
	for h := l.held.head; h != nil; h = h.next {
		p := h.v
		s.Held = append(s.Held, Holding{PermitID: p.ID, Agent: p.Agent, Since: p.AcquiredAt})
	}
	return s
}

// suffix is appended inside a design's String braces.
func (l *ledger) suffix() string {
	if l.leakOnTimeout {
		return ", leak_on_timeout"
	}
	return ""
}
