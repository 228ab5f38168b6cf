package pacer_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
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

	permit.Release(pacer.Outcome{Kind: events.RequestSuccess, Latency: 174 * time.Second, OutputTokens: 3800})
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

// Spaced is a design of its own, written outside package pacer: at most Slots requests in
// flight, and sends at least Gap apart in simulated time. It decides; pacer.NewCustom waits,
// issues the permits and keeps the bookkeeping. Custom calls its methods one at a time, so it
// needs no lock.
type Spaced struct {
	Slots int           // requests in flight at most
	Gap   time.Duration // simulated time between two sends

	next time.Time // the earliest simulated time of the next send
}

var _ pacer.Decider = (*Spaced)(nil)

// Admit lets a request go when a slot is free and the gap since the last send has passed;
// otherwise it asks to be asked again when the gap will have passed (or when a request ends).
func (s *Spaced) Admit(now time.Time, _ pacer.Demand, held []pacer.Holding) (bool, time.Duration) {
	if len(held) >= s.Slots {
		return false, 0 // only a release frees a slot
	}
	if now.Before(s.next) {
		return false, s.next.Sub(now)
	}
	s.next = now.Add(s.Gap)
	return true, 0
}

// Released learns nothing: Spaced does not adapt.
func (s *Spaced) Released(time.Time, pacer.Holding, pacer.Outcome) {}

// Limit is the concurrency limit Stats reports.
func (s *Spaced) Limit() int { return s.Slots }

// String describes the design, e.g. "Spaced{4, gap 2s}".
func (s *Spaced) String() string { return fmt.Sprintf("Spaced{%d, gap %s}", s.Slots, s.Gap) }

// A custom design: three requests behind Spaced go 2 simulated seconds apart although the
// four slots would let them all go at once; releases are counted like a built-in design's.
func Example_customDesign() {
	// 2 simulated seconds pass in 1 s of wall time: slow enough that a loaded machine's
	// scheduling delays stay far below the second the times are truncated to.
	clk, err := clock.New(2)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := pacer.NewCustom(&Spaced{Slots: 4, Gap: 2 * time.Second}, clk)
	if err != nil {
		fmt.Println(err)
		return
	}
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
	st := p.Stats()
	fmt.Printf("%s: %d of %d in use\n", p, st.InUse, st.Limit)
	for _, permit := range permits {
		permit.Release(pacer.Outcome{Kind: events.RequestSuccess})
	}
	fmt.Println("released", p.Stats().Released)
	// Output:
	// agent 0 sends at t=0s
	// agent 1 sends at t=2s
	// agent 2 sends at t=4s
	// Spaced{4, gap 2s}: 3 of 4 in use
	// released 3
}
