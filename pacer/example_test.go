package pacer_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/pacer"
)

// New builds a design from its configuration (the pacer: section of a workload). The caller
// holds each permit until its response ends, then releases it with the outcome.
func ExampleNew() {
	p, err := pacer.New(pacer.Config{Kind: pacer.KindSlots, Slots: 2}, clock.Real())
	if err != nil {
		fmt.Println(err)
		return
	}
	permit, err := p.Acquire(context.Background(), pacer.Demand{Agent: 7})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: permit %d for agent %d, %d of %d in use\n", p, permit.ID, permit.Agent, p.Stats().InUse, p.Stats().Limit)

	permit.Release(pacer.Outcome{Kind: pacer.Success, Latency: 174 * time.Second, OutputTokens: 3800})
	st := p.Stats()
	fmt.Printf("after release: acquired %d = released %d + in use %d\n", st.Acquired, st.Released, st.InUse)
	// Output:
	// Slots{2}: permit 1 for agent 7, 1 of 2 in use
	// after release: acquired 1 = released 1 + in use 0
}

// Validate reports every problem at once, each naming the key, the value and what is allowed.
func ExampleConfig_Validate() {
	err := pacer.Config{Kind: pacer.KindSlots, Slots: 0, RPS: 5}.Validate()
	fmt.Println(err)
	// Output:
	// pacer.slots: 0 is not allowed: want an integer ≥ 1 for kind "slots"
	// pacer.rps: 5 is not allowed: kind "slots" does not use it, leave it unset (it applies to rate, slots+rate, ticket)
}

// Kinds lists the designs New accepts.
func ExampleKinds() {
	fmt.Println(pacer.Kinds())
	// Output:
	// [aimd gradient rate slots slots+rate ticket tpm unlimited]
}

// Spaced is a design of its own: requests go at least Gap apart in simulated time, on top of
// the concurrency limit of the design it wraps.
//
// A Pacer must return *pacer.Permit values, and only the package's own designs can make
// permits whose Release is counted: a Permit built elsewhere is tied to no pacer and its
// Release does nothing. So a design outside package pacer composes a built-in one, which
// issues and counts the permits, and adds its own decision around it. Stats are the inner
// design's; an agent sleeping for its turn already holds a permit and counts in InUse.
type Spaced struct {
	Inner pacer.Pacer
	Clock *clock.Clock
	Gap   time.Duration // simulated time between two sends

	mu   sync.Mutex
	next time.Time // simulated time at which the next send may go
}

var _ pacer.Pacer = (*Spaced)(nil)

// Acquire takes a permit from the inner design, then waits for the request's turn.
func (s *Spaced) Acquire(ctx context.Context, req pacer.Demand) (*pacer.Permit, error) {
	p, err := s.Inner.Acquire(ctx, req)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	now := s.Clock.Now()
	at := s.next
	if at.Before(now) {
		at = now
	}
	s.next = at.Add(s.Gap)
	s.mu.Unlock()
	if err := s.Clock.Sleep(ctx, at.Sub(now)); err != nil {
		p.Release(pacer.Outcome{Kind: pacer.Cancelled})
		return nil, err
	}
	return p, nil
}

// String describes the design, e.g. "Spaced{Slots{4}, gap 2s}".
func (s *Spaced) String() string { return fmt.Sprintf("Spaced{%s, gap %s}", s.Inner, s.Gap) }

// Stats returns the inner design's bookkeeping.
func (s *Spaced) Stats() pacer.Stats { return s.Inner.Stats() }

// A custom design: three requests behind Spaced go 2 simulated seconds apart although the
// four slots would let them all go at once.
func Example_customDesign() {
	clk, err := clock.New(10) // 2 simulated seconds pass in 200 ms of wall time
	if err != nil {
		fmt.Println(err)
		return
	}
	slots, err := pacer.New(pacer.Config{Kind: pacer.KindSlots, Slots: 4}, clk)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := &Spaced{Inner: slots, Clock: clk, Gap: 2 * time.Second}
	start := clk.Now()
	var permits []*pacer.Permit
	for agent := range 3 {
		permit, err := p.Acquire(context.Background(), pacer.Demand{Agent: agent})
		if err != nil {
			fmt.Println(err)
			return
		}
		permits = append(permits, permit)
		fmt.Printf("agent %d sends at t=%s\n", agent, clk.Since(start).Truncate(time.Second))
	}
	for _, permit := range permits {
		permit.Release(pacer.Outcome{Kind: pacer.Success})
	}
	fmt.Println(p, "released", p.Stats().Released)
	// Output:
	// agent 0 sends at t=0s
	// agent 1 sends at t=2s
	// agent 2 sends at t=4s
	// Spaced{Slots{4}, gap 2s} released 3
}
