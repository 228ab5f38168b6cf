package diagnose

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// watchEach replays w up to until as the harness does live — events as they happen, Stall
// after every sample — and returns the statuses with their times.
func watchEach(w *world, cfg Config, until float64) (times []float64, statuses []Stall) {
	a := New(cfg)
	evs := w.sorted()
	i := 0
	for _, s := range w.samples(until) {
		for ; i < len(evs) && evs[i].TS <= s.TS; i++ {
			a.Event(evs[i])
		}
		a.Sample(s)
		times = append(times, s.TS)
		statuses = append(statuses, a.Stall(s.TS))
	}
	return times, statuses
}

// twoStalls: one agent whose request goes silent at t=11 s until a 300 s timeout ends it at
// t=301 s; its retry goes silent at t=312 s and times out at t=602 s; then the agent stops.
func twoStalls() *world {
	w := newWorld(1, 1)
	stall := call{dur: 300, ttft: 2, silent: 10, kind: events.Timeout, class: "timeout_request"}
	w.agent(0, 0).read(1).wait(0).call(stall).backoff(1).call(stall).release(false).roundDone(false, 0).done()
	return w
}

func TestWatchWarnsOncePerEpisode(t *testing.T) {
	cfg := Config{Agents: 1, PacerKind: "slots", PacerSlots: 1, Timeouts: workloads.Timeouts{Request: 300 * time.Second},
		StallAfter: 120 * time.Second, HangAfter: 250 * time.Second}
	times, sts := watchEach(twoStalls(), cfg, 700)
	var warned, hung []float64
	for i, st := range sts {
		if st.Warn {
			warned = append(warned, times[i])
			assert.Contains(t, st.Message, "no progress for 1")
		}
		if st.Hang {
			hung = append(hung, times[i])
		}
		assert.False(t, st.NothingCanWake, "Stall(%s) = %+v: a timeout is armed", secs(times[i]), st)
	}
	// One warning per silence: 120 s after the last byte at t=11 s and at t=312 s.
	require.Len(t, warned, 2, "warnings at %v", warned)
	assert.InDelta(t, 131, warned[0], 0.75)
	assert.InDelta(t, 432, warned[1], 0.75)
	// Hang while the silence lasts 250 s or more, in both episodes; never once the agent is done.
	require.NotEmpty(t, hung)
	assert.InDelta(t, 261, hung[0], 0.75)
	assert.Less(t, hung[len(hung)-1], 602.0)
}

func TestWatchNoProgress(t *testing.T) {
	w, cfg, _ := wedgeStarvation()
	a := w.feed(cfg, 700)
	st := a.Stall(700)
	assert.InDelta(t, 600, st.NoProgressS, 1e-6, "Stall(700 s).NoProgressS: the last byte was at t=100 s")
	assert.True(t, st.Warn, "first Stall of the episode warns")
	assert.True(t, st.Hang, "600 s without progress reaches hang_after")
	assert.Contains(t, st.Message, "16 silent for ≥ 120 s (longest 600 s); 14 agents waiting in the pacer (longest 590 s)")
	assert.False(t, a.Stall(700.75).Warn, "a second Stall in the same episode does not warn again")
}

// wedgedWith is allWedged(false) for 29 agents plus agent 29 doing what extra scripts.
func wedgedWith(extra func(a *actor)) func() (*world, Config, float64) {
	return func() (*world, Config, float64) {
		w := newWorld(30, 30)
		for id := range 29 {
			w.agent(id, 0).read(1).wait(0).call(call{dur: inf, ttft: 5, silent: 99})
		}
		extra(w.agent(29, 0))
		return w, Config{Agents: 30, PacerKind: "slots", PacerSlots: 30}, 400
	}
}

func TestNothingCanWake(t *testing.T) {
	cases := []struct {
		name  string
		world func() (*world, Config, float64)
		at    float64 // 0: the scenario's own time
		want  bool
	}{
		// Every agent inside a request silent for 300 s, no timeout: nothing can wake it.
		{"all wedged", func() (*world, Config, float64) { return allWedged(false) }, 0, true},
		// The same with a timeout armed: the timeouts will end the requests.
		{"all wedged, timeouts armed", func() (*world, Config, float64) { return allWedged(true) }, 0, false},
		// Silent for 50 s only: less than stall_after, bytes may still come.
		{"silent less than stall_after", func() (*world, Config, float64) { return allWedged(false) }, 150, false},
		// One agent thinking (for 1000 s): it will come back and act.
		{"one agent thinking", wedgedWith(func(a *actor) { a.round(1, 0, call{dur: 5, ttft: 1, tokens: 10}, 1000) }), 0, false},
		// One agent in its read step's tool time.
		{"one agent reading", wedgedWith(func(a *actor) { a.read(1000) }), 0, false},
		// One agent in a retry's backoff.
		{"one agent in backoff", wedgedWith(func(a *actor) {
			a.read(1).wait(0).call(call{dur: 1, ttft: inf, kind: events.Error, class: "http_status", status: 503}).backoff(1000)
		}), 0, false},
		// Holders silent for 600 s, waiters blocked behind them, no timeout.
		{"pacer starved by wedged holders", wedgeStarvation, 0, true},
		// Six holders still complete requests: the waiters will get permits.
		{"pacer still turning", partlyWedged, 0, false},
		// Every permit leaked and no request open: a timeout has nothing to end.
		{"all permits leaked", leakOnTimeout, 0, true},
		// Waiters while permits are free: the pacer could still hand one out.
		{"free permits", lostWakeUp, 0, false},
		// A finished run has nothing left to wake.
		{"run finished", func() (*world, Config, float64) { w, c := smoke(); return w, c, 0 }, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, cfg, at := c.world()
			if c.at != 0 {
				at = c.at
			}
			if at == 0 {
				at = lastTime(w)
			}
			st := w.feed(cfg, at).Stall(at)
			assert.Equal(t, c.want, st.NothingCanWake, "Stall(%s) = %+v", secs(at), st)
			if st.NothingCanWake {
				assert.Contains(t, st.Message, "no armed timeout can end the silent requests")
			}
		})
	}
}

// Nothing but the server can wake this run, yet the server may still resume the silent
// streams: before hang_after without progress the run goes on and its streams are stalled.
// Once hang_after has passed (200 s here) the watchdog ends it, and the verdict names the
// cause even though the waiter has waited less than stall_after.
func TestVerdictWhenNothingCanWake(t *testing.T) {
	w := newWorld(3, 2)
	for id := range 2 {
		w.agent(id, 0).read(1).wait(0).call(call{dur: inf, ttft: 2, silent: 10})
	}
	w.agent(2, 0).read(197).wait(inf)
	early := w.feed(Config{Agents: 3, PacerKind: "slots", PacerSlots: 2}, 250)
	st := early.Stall(250)
	require.True(t, st.NothingCanWake)
	assert.False(t, st.Hang, "238 s without progress is less than the default hang_after of 600 s")
	assert.Equal(t, results.StalledStreams, early.Verdict(250).Kind, "before hang_after a silent stream may still resume")

	cfg := Config{Agents: 3, PacerKind: "slots", PacerSlots: 2, HangAfter: 200 * time.Second}
	a := w.feed(cfg, 250)
	require.True(t, a.Stall(250).Hang)
	v := a.Verdict(250)
	assert.Equal(t, results.PacerStarvation, v.Kind, "%s: %v", v.Summary, v.Evidence)
	assert.Contains(t, v.Summary, "1/3 agents starved in the pacer for up to 53 s while all 2 permits were held by requests that had received no byte for ≥ 239 s")
}

// TestToolTimeIsNoStall: an agent running a tool for longer than hang_after, the only one
// still running, moves on by itself: the watch neither warns nor calls it a hang.
func TestToolTimeIsNoStall(t *testing.T) {
	w := newWorld(2, 2)
	w.agent(0, 0).round(1, 0, call{dur: 10, ttft: 1, tokens: 100}, 0).done()
	w.agent(1, 0).read(1).wait(0).call(call{dur: 10, ttft: 1, tokens: 100}).release(false).tools(900).roundDone(true, 0).
		round(0, 0, call{dur: 10, ttft: 1, tokens: 100}, 0).done()
	cfg := Config{Agents: 2, PacerKind: "slots", PacerSlots: 2, StallAfter: 120 * time.Second, HangAfter: 600 * time.Second}
	// Nor when the agent goes on: the tools' end is progress, the next request no hang.
	times, sts := watchEach(w, cfg, 950)
	for i, st := range sts {
		assert.False(t, st.Warn || st.Hang, "Stall(%s) = %+v while agent 1 runs a tool", secs(times[i]), st)
	}
	// Just after the request that follows the tools is sent, before its first byte.
	st := w.feed(cfg, 911.01).Stall(911.01)
	assert.False(t, st.Warn || st.Hang, "Stall(911.01 s) = %+v after agent 1's tools", st)
	a := w.feed(cfg, 500)
	var r results.Results
	a.Fill(&r, 500)
	assert.NotEqual(t, results.Deadlock, r.Verdict.Kind, "%s: %s", r.Verdict.Kind, r.Verdict.Summary)
	assert.NotEqual(t, results.StalledStreams, r.Verdict.Kind, "%s: %s", r.Verdict.Kind, r.Verdict.Summary)
}

// TestWatchDoubtsAsTheVerdictDoes: one request silent since its send, no timeout armed, in a
// run whose samples say the harness ran 50 s behind (stall_after 20 s, hang_after 60 s). At
// 70 s of quiet the watchdog would end the run as hung, yet the final verdict would doubt a
// silence that the lag could explain (Doubt): so the watchdog doubts it too, and the run goes
// on until the quiet is past hang_after plus that lag. Beside a lag of milliseconds it hangs.
func TestWatchDoubtsAsTheVerdictDoes(t *testing.T) {
	for _, c := range []struct {
		lagS   float64
		hungAt float64 // first sample at which Stall says Hang
	}{{50, 111}, {0.04, 60}} {
		a := New(Config{Agents: 1, Rounds: 1, StallAfter: 20 * time.Second, HangAfter: 60 * time.Second})
		a.Event(events.Event{TS: 0, Kind: events.RequestSent, Agent: 0, Round: 1, Request: "a0-r1-0"})
		hungAt := 0.0
		for ts := 1.0; ts <= 120 && hungAt == 0; ts++ {
			a.Sample(events.Sample{TS: ts, LagS: c.lagS, InFlight: 1, Agents: map[events.State]int{events.StateRequesting: 1},
				Streams: []events.Stream{{Request: "a0-r1-0", SentAgoS: ts, SinceLastByteS: ts}}})
			st := a.Stall(ts)
			switch {
			case st.Hang:
				hungAt = ts
			case ts >= 60:
				assert.True(t, st.LagExplains, "t=%v s, lag %v s: %s", ts, c.lagS, st.Message)
				assert.Contains(t, st.Message, "within the run's own lag of 50 s (simulated): the run goes on")
			}
		}
		assert.Equal(t, c.hungAt, hungAt, "lag %v s", c.lagS)
	}
}

// TestSayWhatTheServerWasDoing: a 90 k-token request sent first has had no first token for
// 150 s, and the three short requests sent after it wait too, though short prompts had their
// first token within a second: head-of-line blocking by its prefill, said so with the prompt
// rate the run measured, not a bare stall.
func TestSayWhatTheServerWasDoing(t *testing.T) {
	a := New(Config{Agents: 5, Rounds: 2, StallAfter: 60 * time.Second, HangAfter: 600 * time.Second})
	sent := func(ts float64, agent int, id string, ctx int) events.Event {
		return events.Event{TS: ts, Kind: events.RequestSent, Agent: agent, Round: 1, Request: id, ContextTokens: ctx}
	}
	// Two short requests, each 2,000 tokens with its first token 1 s on and done.
	for i, id := range []string{"a4-r1-0", "a3-r1-0"} {
		ts := float64(i)
		feedAll(a, sent(ts, 4-i, id, 2000), events.Event{TS: ts + 1, Kind: events.FirstContent, Agent: 4 - i, Round: 1, Request: id},
			events.Event{TS: ts + 2, Kind: events.Done, Agent: 4 - i, Round: 1, Request: id, LatencyS: 2, Chunks: 10, CompletionTokens: 10})
	}
	feedAll(a, sent(10, 0, "a0-r1-0", 90000), sent(11, 1, "a1-r1-0", 3000), sent(12, 2, "a2-r1-0", 1500), sent(13, 3, "a3-r2-0", 2500))
	v := a.Verdict(160)
	assert.Contains(t, strings.Join(v.Evidence, "\n"), "what the server was doing: head-of-line blocking by a 90 k-token prefill: request a0-r1-0 (sent at t=10 s) has had no first token for 150 s, "+
		"and the 3 silent requests sent after it wait too, though their prompts are shorter (1.5–3 k tokens); "+
		"at the prompt rate the server showed, 2000 tokens/s of time to first token over 2 requests, a 90 k-token prompt takes 45 s to prefill", v.Kind)
}
