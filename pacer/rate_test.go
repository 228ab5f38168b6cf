package pacer

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
)

// Rate{2 rps, burst 4}: 10 agents arriving together get Burst permits at once, then one per
// 0.5 simulated seconds. At speedup 20 the simulated schedule is the same and the (virtual)
// wall time is 20× shorter.
func TestRateBurstThenSteady(t *testing.T) {
	want := []time.Duration{0, 0, 0, 0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond,
		2 * time.Second, 2500 * time.Millisecond, 3 * time.Second}
	for _, speedup := range []float64{1, 20} {
		synctest.Test(t, func(t *testing.T) {
			clk, err := clock.New(speedup)
			require.NoError(t, err)
			p := mustNew(t, Config{Kind: "rate", RPS: 2, Burst: 4}, clk)
			start, wallStart := clk.Now(), time.Now()
			results := make([]<-chan result, len(want))
			for i := range results {
				results[i] = goAcquire(t.Context(), p, i)
			}
			synctest.Wait()
			assertCounts(t, p, 4, 6, 4, 0, 0)
			var got []time.Duration
			for i, ch := range results {
				r := <-ch
				require.NoError(t, r.err, "agent %d at speedup %v", i, speedup)
				got = append(got, since(start, r.p))
				defer r.p.Release(Outcome{})
			}
			slices.Sort(got)
			for i := range want {
				assert.InDelta(t, want[i].Seconds(), got[i].Seconds(), 1e-3,
					"speedup %v: permit %d acquired at %v; want %v", speedup, i, got[i], want[i])
			}
			assert.InDelta(t, 3/speedup, time.Since(wallStart).Seconds(), 1e-3,
				"virtual wall time for 3 simulated seconds at speedup %v", speedup)
			assertCounts(t, p, 10, 0, 10, 0, 0)
		})
	}
}

// A cancelled token wait gives its reservation back: the next agent gets the token the
// cancelled one would have had, not the one after.
func TestRateCancelGivesReservationBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		start := clk.Now()
		p := mustNew(t, Config{Kind: "rate", RPS: 1, Burst: 1}, clk)
		a, err := p.Acquire(t.Context(), Demand{Agent: 0})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		b := goAcquire(ctx, p, 1)
		time.Sleep(500 * time.Millisecond)
		assertCounts(t, p, 1, 1, 1, 0, 0)
		cancel()
		assert.ErrorIs(t, (<-b).err, context.Canceled)
		assertCounts(t, p, 1, 0, 1, 0, 0)
		c, err := p.Acquire(t.Context(), Demand{Agent: 2})
		require.NoError(t, err)
		assert.Equal(t, time.Second, since(start, c), "the next agent's token is due at")
		a.Release(Outcome{})
		c.Release(Outcome{})
	})
}

// slots+rate takes the slot first; if the token wait is cancelled, the slot is given back.
func TestSlotsRateReleasesSlotWhenTokenWaitCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		start := clk.Now()
		p := mustNew(t, Config{Kind: "slots+rate", Slots: 2, RPS: 1, Burst: 1}, clk).(*SlotsRate)
		a, err := p.Acquire(t.Context(), Demand{Agent: 0})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		b := goAcquire(ctx, p, 1) // gets the second slot, waits for a token
		time.Sleep(500 * time.Millisecond)
		assert.Equal(t, 2, p.sem.inUse(), "slots held while b waits for its token")
		assertCounts(t, p, 1, 1, 1, 0, 0)
		cancel()
		assert.ErrorIs(t, (<-b).err, context.Canceled)
		assert.Equal(t, 1, p.sem.inUse(), "slots held after b gave up")
		assertCounts(t, p, 1, 0, 1, 0, 0)

		c, err := p.Acquire(t.Context(), Demand{Agent: 2})
		require.NoError(t, err, "the slot b gave back")
		assert.Equal(t, time.Second, since(start, c), "c acquired at")
		d := goAcquire(t.Context(), p, 3) // both slots held: waits for a slot, not a token
		time.Sleep(10 * time.Second)
		s := assertCounts(t, p, 2, 1, 2, 0, 0)
		assert.Equal(t, 10*time.Second, s.LongestWait, "d waits for a slot")
		a.Release(Outcome{})
		r := <-d
		require.NoError(t, r.err)
		assert.Equal(t, 11*time.Second, since(start, r.p), "d acquired at, the token being long due")
		c.Release(Outcome{})
		r.p.Release(Outcome{})
		assertCounts(t, p, 0, 0, 3, 3, 0)
	})
}

// tpm: a request larger than the whole budget fails at once; others wait for the budget,
// which Release never refunds.
func TestTPMBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		start := clk.Now()
		p := mustNew(t, Config{Kind: "tpm", TokensPerMinute: 6000}, clk) // 100 tokens/s

		_, err := p.Acquire(t.Context(), Demand{PromptTokens: 5000, ExpectedOutputTokens: 1001})
		require.Error(t, err, "a 6001-token request on a 6000-token budget")
		assert.True(t, errors.Is(err, ErrTooLarge), "errors.Is(%v, ErrTooLarge)", err)
		assert.Contains(t, err.Error(), "6001 tokens (prompt + expected output) exceed pacer.tokens_per_minute 6000")
		assert.Equal(t, time.Duration(0), clk.Since(start), "rejected without waiting")
		assertCounts(t, p, 0, 0, 0, 0, 0)

		a, err := p.Acquire(t.Context(), Demand{PromptTokens: 4000, ExpectedOutputTokens: 2000})
		require.NoError(t, err)
		assert.Equal(t, time.Duration(0), since(start, a), "the whole budget at once")
		time.Sleep(time.Second)
		a.Release(Outcome{PromptTokens: 4000, OutputTokens: 10}) // 1990 tokens unused: not refunded
		b, err := p.Acquire(t.Context(), Demand{PromptTokens: 2000, ExpectedOutputTokens: 1000})
		require.NoError(t, err)
		assert.InDelta(t, 30.0, since(start, b).Seconds(), 1e-3, "3000 tokens at 100 tokens/s, no refund")
		b.Release(Outcome{})
		assertCounts(t, p, 0, 0, 2, 2, 0)
	})
}
