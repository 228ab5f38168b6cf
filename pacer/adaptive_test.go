package pacer

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// granted collects, without blocking, the permits of the Acquire calls that have returned.
func granted(t *testing.T, results []<-chan result) (permits []*Permit, pending []<-chan result) {
	t.Helper()
	for _, ch := range results {
		select {
		case r := <-ch:
			require.NoError(t, r.err)
			permits = append(permits, r.p)
		default:
			pending = append(pending, ch)
		}
	}
	return permits, pending
}

// AIMD collapses on timeouts: 30 agents, limit 20, every request times out after 60 s; each
// timeout halves the limit down to MinLimit, so one agent runs and nine wait. A success then
// grows the limit by one and admits another agent.
func TestAIMDCollapsesOnTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := mustNew(t, Config{Kind: "aimd", InitialLimit: 20, MinLimit: 1, MaxLimit: 200, BackoffRatio: 0.5},
			clock.Real())
		results := make([]<-chan result, 30)
		for i := range results {
			results[i] = goAcquire(t.Context(), p, i)
		}
		synctest.Wait()
		held, pending := granted(t, results)
		require.Len(t, held, 20, "admitted at limit 20")
		assert.Equal(t, 20, p.Stats().Limit, "Limit before any outcome")

		time.Sleep(60 * time.Second)
		for _, pm := range held {
			pm.Release(Outcome{Kind: events.RequestTimeout, Latency: 60 * time.Second})
		}
		synctest.Wait()
		held, pending = granted(t, pending)
		require.Len(t, held, 1, "admitted after 20 timeouts")
		s := assertCounts(t, p, 1, 9, 21, 20, 0)
		assert.Equal(t, 1, s.Limit, "Limit after 20 timeouts (20→10→5→2→1…)")
		assert.Equal(t, "AIMD{limit 1 [1..200] ×0.5}", p.String())

		held[0].Release(Outcome{Kind: events.RequestSuccess, Latency: time.Second})
		synctest.Wait()
		held, pending = granted(t, pending)
		assert.Len(t, held, 2, "admitted after one success at limit 1")
		s = assertCounts(t, p, 2, 7, 23, 21, 0)
		assert.Equal(t, 2, s.Limit, "Limit after a success with inflight·2 ≥ limit")

		for len(held) > 0 { // drain: every success admits more
			for _, pm := range held {
				pm.Release(Outcome{Kind: events.RequestSuccess})
			}
			synctest.Wait()
			held, pending = granted(t, pending)
		}
		assert.Empty(t, pending, "agents still waiting")
		assertCounts(t, p, 0, 0, 30, 30, 0)
	})
}

// Gradient2's limit only moves when requests complete: with 20 requests in flight for 10
// simulated minutes the limit stays frozen while 10 agents wait, and when the 600 s requests
// finally end the limit does not fall, since no fast RTT was ever seen to compare with.
func TestGradientFrozenWhileNothingCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := mustNew(t, Config{Kind: "gradient", InitialLimit: 20, MinLimit: 1, MaxLimit: 200, Tolerance: 1.5},
			clock.Real())
		results := make([]<-chan result, 30)
		for i := range results {
			results[i] = goAcquire(t.Context(), p, i)
		}
		synctest.Wait()
		held, pending := granted(t, results)
		require.Len(t, held, 20)
		time.Sleep(10 * time.Minute)
		s := assertCounts(t, p, 20, 10, 20, 0, 0)
		assert.Equal(t, 20, s.Limit, "Limit after 10 minutes without a completion")
		assert.Equal(t, 10*time.Minute, s.LongestWait, "LongestWait")

		for len(held) > 0 {
			for _, pm := range held {
				pm.Release(Outcome{Kind: events.RequestSuccess, Latency: 10 * time.Minute})
			}
			synctest.Wait()
			held, pending = granted(t, pending)
		}
		assert.Empty(t, pending)
		assert.GreaterOrEqual(t, p.Stats().Limit, 20, "Limit after 600 s completions")
	})
}
