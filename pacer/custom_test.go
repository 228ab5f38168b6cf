package pacer

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// gapSlots is a Decider for tests: at most slots in flight, sends gap apart; it records what
// it was told.
type gapSlots struct {
	slots    int
	gap      time.Duration
	next     time.Time
	asked    int
	lastHeld []Holding
	released []Holding
	outcomes []events.RequestOutcome
}

func (g *gapSlots) Admit(now time.Time, _ Demand, held []Holding) (bool, time.Duration) {
	g.asked++
	g.lastHeld = held
	if len(held) >= g.slots {
		return false, 0
	}
	if now.Before(g.next) {
		return false, g.next.Sub(now)
	}
	g.next = now.Add(g.gap)
	return true, 0
}

func (g *gapSlots) Released(_ time.Time, p Holding, o Outcome) {
	g.released = append(g.released, p)
	g.outcomes = append(g.outcomes, o.Kind)
}

func (g *gapSlots) Limit() int     { return g.slots }
func (g *gapSlots) String() string { return fmt.Sprintf("gapSlots{%d, %s}", g.slots, g.gap) }

// A custom design behind NewCustom: requests wait in arrival order, the head is asked again
// when its retry time comes and when a request ends, and Stats keep the same invariants as a
// built-in design's.
func TestCustomWaitsAsTheDeciderSays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		start := clk.Now()
		d := &gapSlots{slots: 2, gap: 3 * time.Second}
		p, err := NewCustom(d, clk)
		require.NoError(t, err)
		results := make([]<-chan result, 4)
		for i := range results {
			results[i] = goAcquire(t.Context(), p, i)
			synctest.Wait()
		}
		r0 := <-results[0]
		require.NoError(t, r0.err)
		assert.Equal(t, time.Duration(0), since(start, r0.p), "agent 0 acquired at")
		s := assertCounts(t, p, 1, 3, 1, 0, 0)
		assert.Equal(t, 2, s.Limit, "Stats().Limit from the Limiter")

		// The gap: agent 1 goes 3 s later; then both slots are held.
		r1 := <-results[1]
		require.NoError(t, r1.err)
		assert.Equal(t, 3*time.Second, since(start, r1.p), "agent 1 acquired at")
		assert.Equal(t, 1, r1.p.Agent)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assertCounts(t, p, 2, 2, 2, 0, 0)
		assert.Equal(t, []Holding{{PermitID: 1, Agent: 0, Since: start}, {PermitID: 2, Agent: 1, Since: start.Add(3 * time.Second)}},
			d.lastHeld, "Admit was shown the held permits, oldest first")

		// A release wakes the head (agent 2), not agent 3.
		r0.p.Release(Outcome{Kind: events.RequestTimeout})
		r2 := <-results[2]
		require.NoError(t, r2.err)
		assert.Equal(t, 2, r2.p.Agent, "the oldest waiter goes first")
		assert.Equal(t, 13*time.Second, since(start, r2.p), "agent 2 acquired at")
		require.Equal(t, []Holding{{PermitID: 1, Agent: 0, Since: start}}, d.released, "Released got the permit")
		assert.Equal(t, []events.RequestOutcome{events.RequestTimeout}, d.outcomes)

		// A cancelled waiter leaves the queue and holds nothing.
		ctx, cancel := context.WithCancel(t.Context())
		r4 := goAcquire(ctx, p, 4)
		synctest.Wait()
		assertCounts(t, p, 2, 2, 3, 1, 0)
		cancel()
		require.ErrorIs(t, (<-r4).err, context.Canceled)
		assertCounts(t, p, 2, 1, 3, 1, 0)

		r1.p.Release(Outcome{})
		r3 := <-results[3]
		require.NoError(t, r3.err)
		assert.Equal(t, 16*time.Second, since(start, r3.p), "agent 3 acquired at: the gap after agent 2")
		r2.p.Release(Outcome{})
		r3.p.Release(Outcome{})
		r3.p.Release(Outcome{}) // a second release is a no-op
		assertCounts(t, p, 0, 0, 4, 4, 0)
		assert.Equal(t, "gapSlots{2, 3s}", p.String())
	})
}

// NewCustom refuses what it cannot use.
func TestNewCustomRefusesNil(t *testing.T) {
	_, err := NewCustom(nil, clock.Real())
	assert.EqualError(t, err, "pacer: nil Decider")
	_, err = NewCustom(&gapSlots{}, nil)
	assert.EqualError(t, err, "pacer: nil clock")
}
