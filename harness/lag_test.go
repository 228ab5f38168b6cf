package harness

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/clock"
)

func TestLagWarningThresholds(t *testing.T) {
	const stallAfter = 120 * time.Second // ocbrowse's: the limit is 6 s, or 5 % of the median latency
	small := clock.LagStats{N: 1000, P50: time.Millisecond, P99: 5 * time.Second, Max: 8 * time.Second}
	assert.Empty(t, lagWarning(small, 1000, stallAfter, 0), "5 s is within 5 %% of 120 s")
	assert.Empty(t, lagWarning(small, 1000, stallAfter, 170), "5 s is within 5 %% of 120 s and of 170 s")

	large := clock.LagStats{N: 1000, P50: 100 * time.Millisecond, P99: 60 * time.Second, Max: 200 * time.Second}
	assert.Equal(t, "harness lag p99 60 s (simulated) exceeds 6.0 s (5 % of stall_after 2m0s): "+
		"the harness, not the server, is setting the pace, so latencies and stall times are inflated; use --speedup 300 or lower",
		lagWarning(large, 3000, stallAfter, 700))
	assert.Contains(t, lagWarning(small, 1000, stallAfter, 13.6), "exceeds 0.7 s (5 % of the median end-to-end latency 14 s)",
		"the latency bound applies when it is the tighter one")
	assert.NotContains(t, lagWarning(large, 1, stallAfter, 0), "--speedup", "at speedup 1 there is nothing to lower")

	few := large
	few.N = lagMinWaits - 1
	assert.Empty(t, lagWarning(few, 1000, stallAfter, 0), "too few waits to judge")
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
