package harness

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// starvedSim is the embedded simulator's lag with its process starved of CPU: every loop falls
// behind its model as fast as simulated time passes, so the simulator's largest lag (Behind)
// grows with the run — on whichever requests are moving. What it tells of each request
// (RequestLag) is the engine's own.
type starvedSim struct {
	SimLag
	clk   *clock.Clock
	start time.Time
}

func (s starvedSim) Behind() time.Duration { return max(s.SimLag.Behind(), 2*s.clk.Since(s.start)) }

// TestWedgeUnderSimulatorLag: smoke, every request reaching the simulator 40 s after the
// harness sent it (twice stall_after), while the simulator is ever further behind its model on
// the requests that move; long-context-wedge wedges requests after their first tokens. The
// model gives a wedged request no token, so none of its silence is the simulator's: when the
// run stops, its verdict still blames the wedged requests — stalled-streams, or deadlock once
// only wedged agents are left for hang_after (the duration waits for the run's model time,
// which this simulator's lag holds still for stall_after). The requests that move, their first token 40 s late
// by their own lag, are not counted as stalled. Credited with the simulator's largest lag, on
// any request, the wedged silences went unseen.
func TestWedgeUnderSimulatorLag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 40 * time.Second
		res, dir := runSim(t, t.Context(), simCase{workload: "smoke", speedup: 20, late: delay,
			faults: []string{"long-context-wedge"}, faultParams: []string{"threshold_tokens=500", "probability=0.005"},
			simLag: func(own SimLag, clk *clock.Clock) SimLag { return starvedSim{SimLag: own, clk: clk, start: clk.Now()} }})
		w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke"})
		require.NoError(t, err)

		v := res.Verdict
		require.Contains(t, []results.VerdictKind{results.StalledStreams, results.Deadlock}, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
		evs, err := events.ReadFile[events.Event](filepath.Join(dir, "events.jsonl"))
		require.NoError(t, err)
		var wedged, moved int
		for _, e := range evs {
			switch {
			case e.Kind == events.Cancelled && e.SinceLastByteS >= w.Watchdog.StallAfter.Seconds():
				wedged++
				assert.Zero(t, e.SimLagS, "wedged request %s: its model gives it no token", e.Request)
				assert.Contains(t, v.Summary+strings.Join(v.Evidence, "\n"), e.Request, "the verdict names the wedged request")
			case e.Kind == events.Done:
				moved++
				assert.GreaterOrEqual(t, e.TTFTS, delay.Seconds(), "request %s: its first token came that late", e.Request)
				assert.GreaterOrEqual(t, e.SimLagS, delay.Seconds(), "request %s: by its own lag", e.Request)
			}
		}
		require.Positive(t, wedged)
		assert.Positive(t, moved, "requests moved, late by the simulator")
		assert.Equal(t, wedged, res.Requests.Stalled, "the wedged requests, and none of those that moved late")

		samples, err := events.ReadFile[events.Sample](filepath.Join(dir, "samples.jsonl"))
		require.NoError(t, err)
		last := samples[len(samples)-1]
		assert.True(t, last.SimLagPerRequest)
		assert.Greater(t, last.SimLagS, 100.0, "the simulator is far behind on the moving requests")
	})
}
