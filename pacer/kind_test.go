package pacer

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKindLimits(t *testing.T) {
	tests := []struct {
		k        Kind
		fixed    bool
		whenFree bool
	}{
		// A plain semaphore: a fixed limit, and a free permit admits at once.
		{KindSlots, true, true},
		// Fixed limits, but a waiter may also wait for a rate token or a ticket.
		{KindSlotsRate, true, false},
		{KindTicket, true, false},
		// No fixed limit: none, a rate, a budget, or one that adapts.
		{KindUnlimited, false, false},
		{KindRate, false, false},
		{KindTPM, false, false},
		{KindAIMD, false, false},
		{KindGradient, false, false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.fixed, tc.k.FixedLimit(), "%q.FixedLimit()", tc.k)
		assert.Equal(t, tc.whenFree, tc.k.AdmitsWhenFree(), "%q.AdmitsWhenFree()", tc.k)
	}
	assert.Len(t, tests, len(Kinds()), "every registered kind is in the table")
}
