// Package pacer decides when each agent of a simulated LLM harness may send its next request.
//
// Every design implements Pacer: Acquire blocks until the request may go and returns a
// *Permit, which the caller holds until the response ends and then Releases with the Outcome.
// Each design keeps its decision (may this go now? what is the new limit?) in pure functions
// and waits through a *clock.Clock, so --speedup runs and testing/synctest bubbles execute the
// same code. Every duration in this package is simulated time.
//
// Each design's doc comment names the failure it exists to show; build one with
// New from a validated Config. A design of your own implements Decider — the decision alone,
// may this request go now — and NewCustom makes it a Pacer with the same permits and Stats
// (see Example_customDesign).
package pacer

import (
	"context"
	"errors"
	"time"

	"github.com/agentsim/agentsim/events"
)

// Pacer admits requests. Implementations are safe for concurrent use.
type Pacer interface {
	// Acquire blocks until the request may be sent or ctx is done; in the second case it
	// returns ctx.Err() and holds nothing. The caller must Release the returned Permit.
	Acquire(ctx context.Context, req Demand) (*Permit, error)
	// String describes the design and its parameters, e.g. "Slots{30}".
	String() string
	// Stats is a consistent snapshot of the pacer's bookkeeping.
	Stats() Stats
}

// Demand is what one request asks of the pacer: who sends it and how many tokens it will cost.
type Demand struct {
	// Agent is the requesting agent's index, for bookkeeping only.
	Agent int
	// PromptTokens is the prompt's size in tokens (used by the tpm design).
	PromptTokens int
	// ExpectedOutputTokens is the output the agent expects, in tokens (used by tpm).
	ExpectedOutputTokens int
}

// Outcome is how the request behind a permit ended; adaptive designs learn from it.
type Outcome struct {
	// Kind is how the request ended: success, timeout, error or cancelled (a cancelled
	// request carries no congestion signal).
	Kind events.RequestOutcome
	// Latency is the request's duration from send to its end, in simulated time.
	Latency time.Duration
	// PromptTokens and OutputTokens are the tokens actually processed, as counted by the server.
	PromptTokens int
	OutputTokens int
}

// Permit is the right to have one request in flight. It is created by Acquire and must be
// released exactly once; further Release calls are no-ops. Only this package's pacers make
// permits whose Release is counted: a design written elsewhere gets them through NewCustom.
type Permit struct {
	// ID numbers the pacer's permits from 1 in acquisition order.
	ID uint64
	// Agent is Demand.Agent of the request the permit was acquired for.
	Agent int
	// AcquiredAt is the simulated time at which Acquire granted the permit.
	AcquiredAt time.Time

	led      *ledger
	released bool // guarded by led.mu
	link     link[*Permit]
}

// Release returns the permit with the request's outcome. It is safe to call more than once;
// only the first call counts. With leak_on_timeout set, a Timeout outcome keeps the permit
// held forever (counted in Stats.Leaked).
func (p *Permit) Release(o Outcome) {
	if p == nil || p.led == nil {
		return
	}
	p.led.release(p, o)
}

// Stats is a snapshot of a pacer's bookkeeping. Acquired = Released + InUse always holds;
// leaked permits stay in InUse and Held.
type Stats struct {
	// InUse is the number of permits held now, leaked ones included.
	InUse int
	// Waiting is the number of Acquire calls blocked now.
	Waiting int
	// Granted is how many of the Waiting calls have already been granted a permit and not yet
	// run to take it (designs with a FIFO of waiters); count them as in use, not waiting. Under
	// load a woken caller runs as late as the scheduler is.
	Granted int
	// LongestWait is how long the oldest blocked Acquire has waited so far (simulated time);
	// 0 when none waits.
	LongestWait time.Duration
	// Acquired and Released count permits granted and released since the pacer was built.
	Acquired int
	Released int
	// Leaked counts permits deliberately not released (leak_on_timeout).
	Leaked int
	// Limit is the current concurrency limit, 0 when concurrency is unbounded.
	Limit int
	// Held lists the permits held now, oldest first.
	Held []Holding
}

// Holding describes one held permit.
type Holding struct {
	// PermitID is the permit's ID.
	PermitID uint64
	// Agent is the agent holding it.
	Agent int
	// Since is the simulated time at which it was acquired.
	Since time.Time
}

// ErrClosed is returned by Acquire on a pacer that has been closed.
var ErrClosed = errors.New("pacer: closed")

// ErrTooLarge is wrapped by the error returned when a request can never be admitted, such as a
// tpm request larger than the whole per-minute budget.
var ErrTooLarge = errors.New("request larger than the pacer's budget")
