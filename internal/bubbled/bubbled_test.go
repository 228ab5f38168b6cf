package bubbled

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
)

// TestCountsOnlyItsBubble checks that goroutines started in a bubble count and those of another
// bubble, running at the same time, do not.
func TestCountsOnlyItsBubble(t *testing.T) {
	assert.Zero(t, Count(), "outside a bubble")
	other := make(chan struct{})
	otherDone := make(chan struct{})
	go func() {
		// Waiting for synctest.Test itself to return, not only for its function: the test's
		// own bookkeeping ends after the function does, and must before this test ends.
		defer close(otherDone)
		synctest.Test(t, func(t *testing.T) {
			for range 5 {
				go func() { <-other }()
			}
			synctest.Wait()
			<-other
		})
	}()
	synctest.Test(t, func(t *testing.T) {
		// The bubble's own (its root, the test's runner, the test) are a few; the other
		// bubble's five waiting goroutines and its own are not among them.
		before := Count()
		assert.Positive(t, before)
		assert.Less(t, before, 5, "the other bubble's goroutines are not counted")
		stop := make(chan struct{})
		for range 3 {
			go func() { <-stop }()
		}
		synctest.Wait()
		assert.Equal(t, before+3, Count())
		close(stop)
		synctest.Wait()
		assert.Equal(t, before, Count())
	})
	close(other)
	<-otherDone
}
