package harness

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// TestSmokeRunIsCompleteAndConsistent checks the smoke workload end to end: every planned
// round completes, the four files exist, every request_sent has exactly one terminal event,
// and results.json counts equal the events.
func TestSmokeRunIsCompleteAndConsistent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, dir := runSim(t, t.Context(), simCase{workload: "smoke", speedup: 20})
		assert.Equal(t, res.Rounds.Planned, res.Rounds.Completed, "rounds %+v", res.Rounds)
		assert.Equal(t, results.Healthy, res.Verdict.Kind, "%+v", res.Verdict)
		assert.False(t, res.Interrupted)

		evs, err := events.ReadFile[events.Event](dir + "/events.jsonl")
		require.NoError(t, err)
		terminal := map[string]int{}
		sent, done := 0, 0
		for _, e := range evs {
			switch {
			case e.Kind == events.RequestSent:
				sent++
				terminal[e.Request] += 0
			case e.Kind.Terminal():
				terminal[e.Request]++
				if e.Kind == events.Done {
					done++
				}
			}
		}
		for id, n := range terminal {
			assert.Equal(t, 1, n, "request %s has %d terminal events", id, n)
		}
		assert.Equal(t, sent, res.Requests.Sent)
		assert.Equal(t, done, res.Requests.OK)

		onDisk, err := results.Read(dir)
		require.NoError(t, err)
		assert.Equal(t, res.Requests, onDisk.Requests)
		assert.FileExists(t, dir+"/samples.jsonl")
		assert.FileExists(t, dir+"/config.yaml")
	})
}
