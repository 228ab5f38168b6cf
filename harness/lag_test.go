package harness

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/clock"
)

func TestLagWarningThresholds(t *testing.T) {
	const interval = 750 * time.Millisecond
	small := clock.LagStats{N: 1000, P50: time.Millisecond, P99: 50 * time.Millisecond, Max: time.Second}
	assert.Empty(t, lagWarning(small, 100, interval, 0), "50 ms is within 10 %% of 750 ms")
	assert.Empty(t, lagWarning(small, 100, interval, 2.4), "50 ms is within 5 %% of 2.4 s")

	large := clock.LagStats{N: 1000, P50: 100 * time.Millisecond, P99: 2 * time.Second, Max: 5 * time.Second}
	assert.Equal(t, "harness lag p99 2.00 s (simulated) exceeds 75.0 ms (10 % of the 750ms sample interval): "+
		"the harness, not the server, is setting the pace, so latencies and stall times are inflated; use --speedup 30 or lower",
		lagWarning(large, 1000, interval, 200))
	assert.Contains(t, lagWarning(small, 100, interval, 0.5), "exceeds 25.0 ms (5 % of the median end-to-end latency 500.0 ms)",
		"the latency bound applies when it is the tighter one")
	assert.NotContains(t, lagWarning(large, 1, interval, 0), "--speedup", "at speedup 1 there is nothing to lower")

	few := large
	few.N = lagMinWaits - 1
	assert.Empty(t, lagWarning(few, 1000, interval, 0), "too few waits to judge")
}

func TestRoundDown(t *testing.T) {
	for x, want := range map[float64]string{0.3: "1", 1: "1", 3.7: "3", 37.5: "30", 2999: "2000", 100: "100"} {
		assert.Equal(t, want, roundDown(x), "roundDown(%v)", x)
	}
}

// A run reports its own scheduling lag; in a bubble every wait ends exactly when due.
func TestRunReportsHarnessLag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, _ := runSim(t, t.Context(), simCase{workload: "smoke", speedup: 20})
		h := res.Harness
		if assert.NotNil(t, h) {
			assert.Positive(t, h.Lag.N, "waits measured")
			assert.Zero(t, h.Lag.Max, "no lag in a bubble")
			assert.Empty(t, h.Warning)
		}
	})
}
