package pacer

import (
	"context"
	"fmt"

	"github.com/agentsim/agentsim/clock"
)

// Slots is a counting semaphore: at most N requests in flight, waiters served first come first
// served, a permit held until the response ends. Its known failure: when every slot is held by
// a stalled stream, every other agent starves.
type Slots struct {
	led ledger
	sem semaphore
}

var _ Pacer = (*Slots)(nil)

func newSlots(cfg Config, clk *clock.Clock) *Slots {
	s := &Slots{sem: semaphore{limit: cfg.Slots}}
	s.led = newLedger(cfg, clk, s.sem.release)
	return s
}

// Acquire waits for a free slot.
func (s *Slots) Acquire(ctx context.Context, req Demand) (*Permit, error) {
	return acquireSlot(ctx, &s.led, &s.sem, req)
}

// String returns e.g. "Slots{30}".
func (s *Slots) String() string { return fmt.Sprintf("Slots{%d%s}", s.sem.limit, s.led.suffix()) }

// Stats returns a snapshot; Limit is the number of slots.
func (s *Slots) Stats() Stats { return semStats(&s.led, &s.sem) }

// acquireSlot admits req through sem, recording the wait in led if it has to block.
func acquireSlot(ctx context.Context, led *ledger, sem *semaphore, req Demand) (*Permit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if sem.tryAcquire() {
		return led.issue(req, nil), nil
	}
	w := led.beginWait()
	queued, err := sem.acquireQueued(ctx)
	if err != nil {
		led.abandon(w)
		return nil, err
	}
	p := led.issue(req, w)
	if queued {
		sem.claimed() // after issue: Stats never sees the permit neither granted nor held
	}
	return p, nil
}
