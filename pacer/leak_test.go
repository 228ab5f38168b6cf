package pacer

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// validConfigs is one valid configuration per kind, with room for at least two permits.
func validConfigs() []Config {
	return []Config{
		{Kind: "unlimited"},
		{Kind: "slots", Slots: 2},
		{Kind: "rate", RPS: 10, Burst: 2},
		{Kind: "slots+rate", Slots: 2, RPS: 10, Burst: 2},
		{Kind: "ticket", Slots: 2, RPS: 10},
		{Kind: "aimd", InitialLimit: 2, MinLimit: 2, MaxLimit: 10, BackoffRatio: 0.9},
		{Kind: "gradient", InitialLimit: 2, MinLimit: 2, MaxLimit: 10, Tolerance: 1.5},
		{Kind: "tpm", TokensPerMinute: 6000},
	}
}

// With leak_on_timeout, every kind keeps a timed-out permit held: InUse stays up, Leaked
// counts it, a later Release of the same permit changes nothing, and other outcomes still
// release normally.
func TestLeakOnTimeoutEveryKind(t *testing.T) {
	for _, cfg := range validConfigs() {
		cfg.LeakOnTimeout = true
		synctest.Test(t, func(t *testing.T) {
			p := mustNew(t, cfg, clock.Real())
			a, err := p.Acquire(t.Context(), Demand{Agent: 0, PromptTokens: 100})
			require.NoError(t, err, "%v.Acquire", p)
			a.Release(Outcome{Kind: events.RequestTimeout, Latency: time.Minute})
			s := assertCounts(t, p, 1, 0, 1, 0, 1)
			assert.Equal(t, a.ID, s.Held[0].PermitID, "%v: the leaked permit is still held", p)
			a.Release(Outcome{Kind: events.RequestSuccess})
			assertCounts(t, p, 1, 0, 1, 0, 1)

			b, err := p.Acquire(t.Context(), Demand{Agent: 1, PromptTokens: 100})
			require.NoError(t, err, "%v.Acquire", p)
			b.Release(Outcome{Kind: events.RequestError})
			assertCounts(t, p, 1, 0, 2, 1, 1)
		})
	}
}

// Slots{2} with leak_on_timeout: two timeouts and the pacer is dead — the next agent starves
// until its deadline. Without the switch the same timeouts free both slots.
func TestLeakOnTimeoutStarvesSlots(t *testing.T) {
	for _, leak := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			clk := clock.Real()
			p := mustNew(t, Config{Kind: "slots", Slots: 2, LeakOnTimeout: leak}, clk)
			for i := range 2 {
				pm, err := p.Acquire(t.Context(), Demand{Agent: i})
				require.NoError(t, err)
				pm.Release(Outcome{Kind: events.RequestTimeout, Latency: 5 * time.Minute})
			}
			ctx, cancel := clk.WithTimeout(t.Context(), time.Hour)
			defer cancel()
			pm, err := p.Acquire(ctx, Demand{Agent: 2})
			if leak {
				assert.ErrorIs(t, err, context.DeadlineExceeded, "leak: third agent after an hour")
				assertCounts(t, p, 2, 0, 2, 0, 2)
				return
			}
			require.NoError(t, err, "no leak: third agent")
			pm.Release(Outcome{})
			assertCounts(t, p, 0, 0, 3, 3, 0)
		})
	}
}
