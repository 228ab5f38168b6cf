package harness

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
)

// TestEveryRoundEnds checks that every round_start has exactly one round_done with an outcome,
// however the run stops: by its duration (rounds in their tool time or waiting for a permit are
// cancelled), by the watchdog (a wedged server: the requests in flight are cancelled, the agents
// waiting for a permit end their rounds as cancelled) and by an interrupt. Cancelled rounds
// count as not started, never as failed.
func TestEveryRoundEnds(t *testing.T) {
	// Eight agents share two permits and use a second or more of tool time per round, so at
	// any stop some rounds are reading and some are waiting.
	busy := map[string]string{"agents": "8", "rounds": "50", "pacer.slots": "2",
		"tool_time": "{dist: uniform, min: 1s, max: 4s}"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		sim         simCase
		interruptAt time.Duration // wall time in the bubble; 0: none
		stop        events.EndReason
	}{
		{name: "duration", sim: simCase{workload: "smoke", overrides: with(busy, "duration", "20s", "grace", "0s"), speedup: 20},
			stop: events.EndDuration},
		{name: "watchdog", sim: simCase{workload: "smoke", overrides: with(busy, "request.ttft_timeout", "30s"),
			faults: []string{"long-context-wedge"}, faultParams: []string{"threshold_tokens=500", "probability=1"}, speedup: 20},
			stop: events.EndWatchdog},
		{name: "interrupt", sim: simCase{workload: "smoke", overrides: busy, speedup: 20},
			interruptAt: time.Second, stop: events.EndInterrupted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.interruptAt > 0 {
					go func() {
						time.Sleep(tc.interruptAt)
						cancel()
					}()
				}
				res, dir := runSim(t, ctx, tc.sim)
				evs, err := events.ReadFile[events.Event](dir + "/events.jsonl")
				require.NoError(t, err)
				started, ended := map[string]int{}, map[string]int{}
				outcomes := map[events.RoundOutcome]int{}
				stopped := false
				for _, e := range evs {
					key := fmt.Sprintf("a%d-r%d", e.Agent, e.Round)
					switch e.Kind {
					case events.RoundStart:
						started[key]++
					case events.RoundDone:
						ended[key]++
						outcomes[e.Outcome]++
						assert.Contains(t, []events.RoundOutcome{events.RoundOK, events.RoundFailed, events.RoundCancelled}, e.Outcome, "%s", key)
					case events.Stop:
						stopped = stopped || e.Reason == tc.stop
					}
				}
				assert.True(t, stopped, "no stop event with reason %s", tc.stop)
				require.NotEmpty(t, started)
				for key, n := range started {
					assert.Equal(t, 1, n, "%s started %d times", key, n)
					assert.Equal(t, 1, ended[key], "round %s has %d round_done events", key, ended[key])
				}
				assert.Len(t, ended, len(started), "a round_done without its round_start")
				assert.Positive(t, outcomes[events.RoundCancelled], "outcomes %v: the stop should cut some rounds before their request", outcomes)
				assert.Equal(t, outcomes[events.RoundOK], res.Rounds.Completed)
				assert.Equal(t, outcomes[events.RoundFailed], res.Rounds.Failed, "cancelled rounds are not failed")
				// Each sample counts the rounds that ended ok or failed before it, for the live
				// line's rounds done of planned: never more than ended by then, never fewer than
				// the sample before, and all of them in the final sample.
				samples, err := events.ReadFile[events.Sample](dir + "/samples.jsonl")
				require.NoError(t, err)
				prev := 0
				for _, s := range samples {
					byThen := 0
					for _, e := range evs {
						if e.Kind == events.RoundDone && e.Outcome != events.RoundCancelled && e.TS <= s.TS {
							byThen++
						}
					}
					assert.LessOrEqual(t, s.RoundsEnded, byThen, "sample at t=%.3f s", s.TS)
					assert.GreaterOrEqual(t, s.RoundsEnded, prev, "sample at t=%.3f s", s.TS)
					prev = s.RoundsEnded
				}
				assert.Equal(t, res.Rounds.Completed+res.Rounds.Failed, samples[len(samples)-1].RoundsEnded, "the final sample")
			})
		})
	}
}
