package diagnose

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// stop scripts the harness stopping the run at t, as the watchdog or the end of the grace
// period does: every request still open is cancelled (its permit released, its round
// failed), every agent still waiting in the pacer gives up, and each of them is done.
func (w *world) stop(t float64) *world {
	for id, ps := range w.phases {
		if len(ps) == 0 || !math.IsInf(ps[len(ps)-1].to, 1) || ps[len(ps)-1].from > t {
			continue
		}
		at := func(e events.Event) {
			e.TS, e.Agent = t, id
			w.events = append(w.events, e)
		}
		switch ps[len(ps)-1].state {
		case events.StateRequesting:
			for _, r := range w.reqs {
				if r.agent == id && math.IsInf(r.end, 1) {
					r.end, r.bytesUntil = t, min(r.bytesUntil, t)
					at(events.Event{Kind: events.Cancelled, Request: r.id, Class: "cancelled"})
				}
			}
			for _, p := range w.permits {
				if p.agent == id && math.IsInf(p.to, 1) && math.IsInf(p.leakedAt, 1) {
					p.to = t
					at(events.Event{Kind: events.Release, Permit: p.id, RequestOutcome: events.RequestCancelled})
				}
			}
			at(events.Event{Kind: events.RoundDone, Outcome: events.RoundFailed, Class: "cancelled"})
		case events.StatePacerWait:
			at(events.Event{Kind: events.Warning, Message: "pacer: context canceled"})
		default:
			continue
		}
		ps[len(ps)-1].to = t
		at(events.Event{Kind: events.AgentDone})
		w.phases[id] = append(ps, phase{state: events.StateDone, from: t, to: inf})
	}
	return w
}

// flowing: agent 0 runs two 10 s rounds and is done by t=22 s; agent 1's one request streams
// from t=2 s for as long as it is left to.
func flowing() *world {
	w := newWorld(2, 2)
	w.agent(0, 0).round(1, 0, call{dur: 10, ttft: 1, tokens: 200}, 0).
		round(1, 0, call{dur: 10, ttft: 1, tokens: 200}, 0).done()
	w.agent(1, 0).read(1).wait(0).call(call{dur: inf, ttft: 1})
	return w
}

// Stopping a run cancels the very requests and pacer waits that showed it stuck. The verdict
// judged after the stop is the one judged just before it, with a line that says so; a run
// that was not stuck when stopped is judged at its end.
func TestStopKeepsStuckVerdict(t *testing.T) {
	cases := []struct {
		name  string
		world func() (*world, Config, float64) // the stop comes 0.3 s after the returned time
		want  results.VerdictKind
		line  string // the evidence line about the stop; "" when there must be none
	}{
		// The watchdog ends a starved run: 16 wedged requests and 14 pacer waits cancelled.
		{"pacer starvation", wedgeStarvation, results.PacerStarvation,
			"judged as the run stood at t=700 s, when the harness began stopping it: the stop then cancelled 16 requests in flight and 14 pacer waits"},
		// The watchdog ends a deadlocked run: 30 wedged requests cancelled.
		{"deadlock", func() (*world, Config, float64) { return allWedged(false) }, results.Deadlock,
			"the stop then cancelled 30 requests in flight and 0 pacer waits"},
		// The grace period ends while one stream is stalled and the others still move.
		{"stalled stream", oneStalled, results.StalledStreams,
			"judged as the run stood at t=300 s, when the harness began stopping it: the stop then cancelled"},
		// A stream still flowing is cancelled: nothing was stuck, so the run is judged at its
		// end, and a cancellation is no failure.
		{"nothing stuck", func() (*world, Config, float64) {
			return flowing(), Config{Agents: 2, PacerKind: "slots", PacerSlots: 2}, 60
		}, results.Healthy, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, cfg, at := c.world()
			// Off the 0.75 s sampling grid: a sample at the stop's very instant may come
			// before or after it (see stopMark), and "before" must see the same records.
			at += 0.3
			before := w.feed(cfg, at).Verdict(at)
			w.stop(at)
			after := w.feed(cfg, at+5).Verdict(at + 5)
			require.Equal(t, c.want, after.Kind, "verdict after the stop: %s\n%s", after.Summary, strings.Join(after.Evidence, "\n"))
			all := strings.Join(after.Evidence, "\n")
			if c.line == "" {
				assert.NotContains(t, all, "when the harness began stopping it")
				return
			}
			assert.Equal(t, before.Summary, after.Summary, "the stop changed the summary")
			assert.Equal(t, before.Evidence, after.Evidence[:len(before.Evidence)], "the stop changed the evidence")
			assert.Contains(t, all, c.line)
			assertUnits(t, after.Evidence)
		})
	}
}

// A stopped run's results count the cancellations, while its verdict stays the stuck one.
func TestStopCountsCancellations(t *testing.T) {
	w, cfg, at := wedgeStarvation()
	a := w.stop(at).feed(cfg, at+1)
	var r results.Results
	a.Fill(&r, at+1)
	assert.Equal(t, results.PacerStarvation, r.Verdict.Kind)
	assert.Equal(t, 16, r.Requests.Cancelled)
	assert.Zero(t, r.Requests.InFlight)
}

// An interrupted run says so: the summary starts with the interruption and an evidence line
// says what it cut. The rounds the interrupt kept from starting are counted by reason.
func TestInterruptedRunSaysSo(t *testing.T) {
	w := flowing()
	w.events = append(w.events, events.Event{TS: 30, Agent: -1, Kind: events.Stop, Reason: events.EndInterrupted,
		Message: "interrupted: no new rounds, requests in flight cancelled"})
	w.stop(30)
	a := w.feed(Config{Agents: 2, Rounds: 3, PacerKind: "slots", PacerSlots: 2}, 31)
	var r results.Results
	a.Fill(&r, 31)
	v := r.Verdict
	assert.True(t, strings.HasPrefix(v.Summary, "interrupted at t=30 s: "), "summary %q", v.Summary)
	assert.Contains(t, v.Evidence, "the run was interrupted at t=30 s: no new rounds, requests in flight cancelled; the verdict covers the run up to then")
	// Agent 0 ran 2 of its 3 rounds and finished before the interrupt, by itself (why, this
	// script does not say); agent 1's request was cancelled (a failed round) and its 2
	// other rounds never started.
	assert.Equal(t, 3, r.Rounds.NotStarted, "rounds %+v", r.Rounds)
	assert.Equal(t, map[string]int{"interrupted": 2, "unknown": 1}, r.Rounds.NotStartedReasons, "rounds %+v", r.Rounds)
	assert.Equal(t, 6, r.Rounds.Planned)
}
