package harness

import (
	"slices"

	"github.com/agentsim/agentsim/events"
)

// instant holds the agents' events stamped with the same simulated time until that time has
// passed, and then releases them ordered by agent (each agent's own events in the order it
// recorded them). Agents woken at the same simulated instant — a decode step handing every
// stream a token at once — record in whatever order the Go scheduler runs them; ordering them
// by agent makes events.jsonl the same for the same seeds in a synctest bubble, where
// simultaneous events are common. Outside a bubble simulated times are nanoseconds apart and
// a group is one event. Its methods are called with run.mu held.
type instant struct {
	ts      float64
	pending []events.Event
}

// add holds e, first releasing the held events through emit when e is of a later time.
func (in *instant) add(e events.Event, emit func(events.Event)) {
	if len(in.pending) > 0 && e.TS != in.ts {
		in.release(emit)
	}
	in.ts = e.TS
	in.pending = append(in.pending, e)
}

// release emits the held events ordered by agent.
func (in *instant) release(emit func(events.Event)) {
	slices.SortStableFunc(in.pending, func(a, b events.Event) int { return a.Agent - b.Agent })
	for _, e := range in.pending {
		emit(e)
	}
	clear(in.pending)
	in.pending = in.pending[:0]
}
