package pacer

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentsim/agentsim/clock"
)

// Ticket is a pacer goroutine that issues tickets at RPS into a channel of capacity Slots; a
// worker takes one to send and holds it until Release, which hands it back to the issuer.
// There are exactly Slots tickets. Its known failure: once every ticket is held, the issuer
// blocks and nobody gets one until a request ends — the "pacer can't issue" hang.
//
// The issuer goroutine belongs to the Ticket: whoever built it (New's caller) must Close it.
type Ticket struct {
	led    ledger
	clk    *clock.Clock
	slots  int
	rps    float64
	free   chan struct{} // released tickets, waiting to be issued again; capacity slots
	issued chan struct{} // issued tickets nobody has taken yet; capacity slots
	stop   chan struct{} // closed by Close
	done   chan struct{} // closed when the issuer has returned

	closeOnce sync.Once
	blocked   atomic.Bool // the issuer waits for a ticket to come back
}

var _ Pacer = (*Ticket)(nil)

// newTicket starts the issuer goroutine; the caller must Close the Ticket.
func newTicket(cfg Config, clk *clock.Clock) *Ticket {
	t := &Ticket{
		clk:    clk,
		slots:  cfg.Slots,
		rps:    cfg.RPS,
		free:   make(chan struct{}, cfg.Slots),
		issued: make(chan struct{}, cfg.Slots),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	for range cfg.Slots {
		t.free <- struct{}{}
	}
	// Tickets never outnumber the capacity of free, so handing one back never blocks.
	t.led = newLedger(cfg, clk, func(Outcome) { t.free <- struct{}{} })
	go t.issue(ticketPeriod(cfg.RPS))
	return t
}

// ticketPeriod is the simulated time between two tickets at rps tickets per second.
func ticketPeriod(rps float64) time.Duration {
	return max(time.Duration(float64(time.Second)/rps), time.Nanosecond)
}

// issue is the issuer goroutine: take back a ticket, wait for the next tick, issue it.
func (t *Ticket) issue(period time.Duration) {
	defer close(t.done)
	tick := t.clk.NewTicker(period)
	defer tick.Stop()
	for {
		if !t.takeBack() {
			return
		}
		select {
		case <-tick.C:
		case <-t.stop:
			return
		}
		select {
		case t.issued <- struct{}{}: // never blocks: one ticket is in hand, so issued has room
		case <-t.stop:
			return
		}
	}
}

// takeBack receives a free ticket, marking the issuer blocked while none is free. It reports
// false when the Ticket is closed.
func (t *Ticket) takeBack() bool {
	select {
	case <-t.free:
		return true
	default:
	}
	t.blocked.Store(true)
	defer t.blocked.Store(false)
	select {
	case <-t.free:
		return true
	case <-t.stop:
		return false
	}
}

// Acquire waits for an issued ticket. It returns ErrClosed once the Ticket is closed.
func (t *Ticket) Acquire(ctx context.Context, req Demand) (*Permit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Two selects, not one: when the Ticket is closed and a ticket is still in issued, a
	// single select would pick either at random.
	select {
	case <-t.stop:
		return nil, ErrClosed
	default:
	}
	select {
	case <-t.issued:
		return t.led.issue(req, nil), nil
	default:
	}
	w := t.led.beginWait()
	select {
	case <-t.issued: // a receive either takes the ticket or not: no grant can be lost
		return t.led.issue(req, w), nil
	case <-ctx.Done():
		t.led.abandon(w)
		return nil, ctx.Err()
	case <-t.stop:
		t.led.abandon(w)
		return nil, ErrClosed
	}
}

// issuerBlocked reports whether the issuer is waiting for a ticket to be released because
// every ticket is out (issued or held): with agents waiting, that is the "pacer can't issue"
// hang.
func (t *Ticket) issuerBlocked() bool { return t.blocked.Load() }

// Close stops the issuer goroutine and waits for it to return. Waiting and later Acquire calls
// return ErrClosed; held permits may still be released. Close is safe to call more than once.
func (t *Ticket) Close() error {
	t.closeOnce.Do(func() { close(t.stop) })
	<-t.done
	return nil
}

// String returns e.g. "Ticket{30 tickets, 2.0 rps}".
func (t *Ticket) String() string {
	return fmt.Sprintf("Ticket{%d tickets, %s rps%s}", t.slots, formatRate(t.rps), t.led.suffix())
}

// Stats returns a snapshot; Limit is the number of tickets.
func (t *Ticket) Stats() Stats { return t.led.stats(t.slots) }
