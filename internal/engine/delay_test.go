package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDelayQueueDropsEveryCancelled checks that due hands back every cancelled event at once,
// whatever their places in the heap. The pushes below build the heap [1 5 2 6 7 3] (seconds);
// cancelling 5 and 6 is the case where removing 6 moves 3 up into 5's place and 5 down past
// a scan that runs from the end.
func TestDelayQueueDropsEveryCancelled(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	q := delayQueue{wake: make(chan struct{}, 1)}
	gens := map[int]*Gen{}
	for _, s := range []int{1, 5, 2, 6, 7, 3} {
		gens[s] = &Gen{ID: uint64(s)}
		q.push(base.Add(time.Duration(s)*time.Second), gens[s], delayTransfer)
	}
	gens[5].cancelled.Store(true)
	gens[6].cancelled.Store(true)

	ready, next, pending := q.due(base)
	var got []uint64
	for _, d := range ready {
		got = append(got, d.g.ID)
	}
	assert.ElementsMatch(t, []uint64{5, 6}, got, "due(before any is due) returns the cancelled events")
	require.True(t, pending)
	assert.Equal(t, base.Add(time.Second), next, "the next event is still the earliest")

	var order []uint64
	for i := range 8 {
		ready, _, _ = q.due(base.Add(time.Duration(i) * time.Second))
		for _, d := range ready {
			order = append(order, d.g.ID)
		}
	}
	assert.Equal(t, []uint64{1, 2, 3, 7}, order, "the others come due in time order")
}
