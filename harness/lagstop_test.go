package harness

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// TestOwnLagEndsNothing: smoke with 100 agents × 3 rounds, every request reaching the
// simulator 50 s after the harness sent it — past stall_after (20 s), and past the workload's
// 2 min duration by the third round. In the simulator's model every request was read when sent
// and done within seconds: the run's own lag, not the server, holds them, and more streams are
// silent at once than a sample names. So no stream counts as stalled, the duration waits for
// the run's model time to reach it, every round's request finishes, and the verdict is healthy
// or slow beside the warning that the simulator set the pace.
func TestOwnLagEndsNothing(t *testing.T) {
	const delay = 50 * time.Second
	synctest.Test(t, func(t *testing.T) {
		c := simCase{workload: "smoke", speedup: 20, late: delay,
			overrides: map[string]string{"agents": "100", "rounds": "3", "pacer.slots": "100"}}
		res, dir := runSim(t, t.Context(), c)
		v := res.Verdict
		why := v.Summary + "\n" + strings.Join(v.Evidence, "\n")
		assert.Equal(t, 300, res.Requests.OK, why)
		assert.Zero(t, res.Requests.Cancelled, why)
		assert.Contains(t, []results.VerdictKind{results.Healthy, results.Slow}, v.Kind, why)
		assert.NotEmpty(t, res.Harness.SimulatorWarning, "the run says the simulator set the pace")
		evs, err := events.ReadFile[events.Event](filepath.Join(dir, "events.jsonl"))
		require.NoError(t, err)
		for _, e := range evs {

			assert.False(t, e.Kind == events.Warning && strings.HasPrefix(e.Message, "watchdog"), "the watchdog saw no stall: %s", e.Message)
		}
		samples, err := events.ReadFile[events.Sample](filepath.Join(dir, "samples.jsonl"))
		require.NoError(t, err)

		var credited bool
		for _, s := range samples {
			credited = credited || (s.Open != nil && s.Open.UnlistedSilentSimLagS >= 20)
		}
		assert.True(t, credited, "the silent streams a sample does not name carry their least lag")
	})
}
