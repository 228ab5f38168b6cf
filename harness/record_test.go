package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/events"
)

// TestInboxTakesInStampOrder checks that the inbox hands events over in the order they were
// stamped, and that taking up to a sample's instant leaves later events queued, to be written
// after that sample.
func TestInboxTakesInStampOrder(t *testing.T) {
	ts := 0.0
	q := newInbox(func(it *recorded) { ts++; it.e.TS = ts })
	for i := range 5 {
		q.put(&events.Event{Agent: i})
	}
	got := q.take(nil, 3)
	assert.Equal(t, []float64{1, 2, 3}, stamps(got))
	assert.Equal(t, []int{0, 1, 2}, agentsOf(got))
	q.put(&events.Event{Agent: 5})
	got = q.take(got[:0], -1)
	assert.Equal(t, []float64{4, 5, 6}, stamps(got))
	assert.Empty(t, q.take(nil, -1))
	select {
	case <-q.ready:
	default:
		t.Error("put signals the writer")
	}
}

func stamps(rs []recorded) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, r.e.TS)
	}
	return out
}

func agentsOf(rs []recorded) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.e.Agent)
	}
	return out
}
