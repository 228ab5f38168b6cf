package pacer

import (
	"context"
	"sync"
)

// semaphore is a FIFO counting semaphore whose limit may change: the waiting half of slots,
// slots+rate, aimd and gradient. A waiter that is cancelled just as it is granted gives the
// slot back and hands it to the next waiter, so no wake-up is lost.
type semaphore struct {
	mu    sync.Mutex
	limit int // may be below held after a decrease; then nobody is granted until held < limit
	held  int
	// granted counts queued waiters granted a slot (counted in held) that have not yet
	// recorded it (see acquireQueued): under load a woken waiter runs as late as the
	// scheduler is.
	granted int
	queue   chain[*semWaiter]
	// adapt, if set, returns the new limit after a permit ends with o; inflight counts the
	// permits held before this one is returned. Called with mu held, so state it touches is
	// guarded by mu.
	adapt func(o Outcome, inflight, limit int) int
}

type semWaiter struct {
	ready   chan struct{} // closed when granted
	granted bool          // guarded by semaphore.mu
	link    link[*semWaiter]
}

// admits reports whether one more permit may be granted now: nobody queued ahead of it (FIFO)
// and held below the limit.
func admits(held, limit, queued int) bool { return queued == 0 && held < limit }

// tryAcquire takes a slot if admits allows it, without blocking.
func (s *semaphore) tryAcquire() bool {
	s.mu.Lock()
	ok := admits(s.held, s.limit, s.queue.n)
	if ok {
		s.held++
	}
	s.mu.Unlock()
	return ok
}

// acquire takes a slot, waiting in FIFO order until one is free or ctx is done.
func (s *semaphore) acquire(ctx context.Context) error {
	queued, err := s.acquireQueued(ctx)
	if queued {
		s.claimed()
	}
	return err
}

// acquireQueued is acquire for a caller that records the permit it obtains: when queued is
// true and err nil, the slot was granted to it in the queue, and it counts as granted (see
// pendingGrants) until the caller, having recorded its permit, calls claimed.
func (s *semaphore) acquireQueued(ctx context.Context) (queued bool, err error) {
	s.mu.Lock()
	if admits(s.held, s.limit, s.queue.n) {
		s.held++
		s.mu.Unlock()
		return false, nil
	}
	w := &semWaiter{ready: make(chan struct{})}
	w.link.v = w
	s.queue.pushBack(&w.link)
	s.mu.Unlock()

	select {
	case <-w.ready:
		return true, nil
	case <-ctx.Done():
		s.mu.Lock()
		if w.granted {
			// Granted between ctx.Done and this lock: give the slot back and pass it on.
			s.granted--
			s.held--
			s.grantLocked()
		} else {
			s.queue.remove(&w.link)
		}
		s.mu.Unlock()
		return false, ctx.Err()
	}
}

// claimed ends the granted state of a waiter whose permit is now recorded.
func (s *semaphore) claimed() {
	s.mu.Lock()
	s.granted--
	s.mu.Unlock()
}

// release returns a slot after a request ended with o, adapting the limit first.
func (s *semaphore) release(o Outcome) {
	s.mu.Lock()
	if s.adapt != nil {
		s.limit = s.adapt(o, s.held, s.limit)
	}
	s.held--
	s.grantLocked()
	s.mu.Unlock()
}

// giveBack returns a slot that was never used for a request; the limit does not adapt.
func (s *semaphore) giveBack() {
	s.mu.Lock()
	s.held--
	s.grantLocked()
	s.mu.Unlock()
}

// grantLocked wakes queued waiters, oldest first, while the limit allows.
func (s *semaphore) grantLocked() {
	for s.queue.head != nil && s.held < s.limit {
		w := s.queue.popFront().v
		w.granted = true
		s.held++
		s.granted++
		close(w.ready)
	}
}

// currentLimit returns the limit now.
func (s *semaphore) currentLimit() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limit
}

// inUse returns the number of slots held now.
func (s *semaphore) inUse() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// pendingGrants returns the number of waiters granted a slot that have not yet recorded it.
func (s *semaphore) pendingGrants() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.granted
}

// semStats snapshots led for a design whose waiters queue in sem, with Granted set. The grants
// are read first, so a waiter that takes its slot meanwhile is counted twice (in use and
// granted) rather than as still waiting.
func semStats(led *ledger, sem *semaphore) Stats {
	g := sem.pendingGrants()
	st := led.stats(sem.currentLimit())
	st.Granted = min(g, st.Waiting)
	return st
}
