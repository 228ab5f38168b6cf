package diagnose

import (
	"strings"
	"testing"
	"time"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// judged replays w up to at (0: its last record) and returns the verdict.
func judged(w *world, cfg Config, at float64) (verdictKind results.VerdictKind, summary string, evidence []string) {
	if at == 0 {
		at = lastTime(w)
	}
	v := w.feed(cfg, at).Verdict(at)
	return v.Kind, v.Summary, v.Evidence
}

// lastTime is the time of the world's last event.
func lastTime(w *world) float64 {
	evs := w.sorted()
	return evs[len(evs)-1].TS
}

func TestVerdict(t *testing.T) {
	type want struct {
		kind     results.VerdictKind
		summary  []string // substrings of the summary
		evidence []string // substrings, each found in some evidence line
		absent   []string // substrings found in no evidence line
	}
	cases := []struct {
		name  string
		world func() (*world, Config, float64)
		want  want
	}{{
		// A wedge that starves the pacer is pacer-starvation, with the stalled streams as
		// evidence and the server's idle decode beside them.
		name:  "wedge starves the pacer",
		world: wedgeStarvation,
		want: want{kind: results.PacerStarvation,
			summary: []string{"14/30 agents starved in the pacer for up to 590 s", "all 16 permits were held by requests that had received no byte for ≥ 600 s"},
			evidence: []string{"14/30 agents have waited in the pacer for 590 s (agents 16, 17, 18, 19, 20, 21, 22, 23 and 6 more)",
				"16 of 16 permits held: 16 by requests silent for ≥ 120 s, 0 leaked, 0 by work still moving (the silent ones for 600 s)",
				"request a0-r1-0 (agent 0, permit 1): no byte for 600 s, sent 699 s ago, 1880 chunks received",
				"… and 8 more silent requests",
				"server decode_running = 0 for 600 s, prefill_inflight = 0 for 699 s while 16 requests are in flight",
				"no timeout is armed"}},
	}, {
		// 30 slots all wedged and no timeout: no one waits in the pacer, nothing can wake
		// the run.
		name:  "all wedged, no timeouts",
		world: func() (*world, Config, float64) { return allWedged(false) },
		want: want{kind: results.Deadlock,
			summary:  []string{"every running agent (30/30) waits on a request silent for ≥ 300 s and no timeout is armed"},
			evidence: []string{"30/30 running agents are inside requests that have received no byte for ≥ 300 s (longest 300 s); none waits in the pacer", "request a0-r1-0 (agent 0, permit 1): no byte for 300 s"}},
	}, {
		// The same wedge with a timeout armed is not a deadlock: the timeouts will end the
		// requests. Until they do the streams are stalled.
		name:  "all wedged, timeouts armed",
		world: func() (*world, Config, float64) { return allWedged(true) },
		want: want{kind: results.StalledStreams,
			summary:  []string{"30 open streams received no byte for ≥ 300 s (longest 300 s) and nothing else has moved for 300 s either"},
			evidence: []string{"timeouts are armed: the silent requests will end when they fire", "30 of 30 open requests are silent; 0 agents wait in the pacer"}},
	}, {
		// A wedge that an idle timeout keeps recovering from is not a hang: the timeouts
		// show up as failures, by class.
		name:  "wedge recovered by idle timeouts",
		world: wedgeIdleTimeout,
		want: want{kind: results.Errors,
			summary:  []string{"16 of 32 finished requests failed (50.0 %)"},
			evidence: []string{"16 of 32 requests failed: 16 timeout_idle", "0 retries", "rounds: 16 completed, 16 failed"}},
	}, {
		// Outcomes, not attempts: every 429 succeeded on its retry, so no request failed.
		// The retries are evidence, with their share and reason.
		name:  "errors that succeeded on retry",
		world: retriedErrors,
		want: want{kind: results.Healthy,
			summary:  []string{"32 rounds completed, 32 requests ok"},
			evidence: []string{"retries: 16 (33.3 % of 48 attempts sent; reasons: 16 http_status 429); 16 requests succeeded on a retry, 0 failed in the end"}},
	}, {
		// leak_on_timeout: the timed-out requests keep their permits; agents starve with no
		// request in flight. The leaked permits are named.
		name:  "leak on timeout",
		world: leakOnTimeout,
		want: want{kind: results.PacerStarvation,
			summary: []string{"6/6 agents starved in the pacer for up to 299 s while all 4 permits were leaked by requests that ended without releasing them"},
			evidence: []string{"permit 1 (agent 0) leaked at t=31 s: its request ended without releasing it; held for 299 s",
				"permit 4 (agent 3) leaked at t=31 s", "4 of 4 permits held: 0 by requests silent for ≥ 120 s, 4 leaked",
				"pacer leak_on_timeout is set", "timeouts are armed but no request is open for them to end"}},
	}, {
		// Leaked permits and wedged holders together starve agents 0, 1, 4 and 5; both kinds
		// of holder are named.
		name:  "leaks and wedge",
		world: leakAndWedge,
		want: want{kind: results.PacerStarvation,
			summary: []string{"4/6 agents starved in the pacer for up to 299 s while all 4 permits were held by 2 requests silent for ≥ 250 s and 2 leaked permits"},
			evidence: []string{"request a2-r1-0 (agent 2, permit 3): no byte for 250 s", "permit 2 (agent 1) leaked at t=31 s",
				// Only ttft_timeout is armed, and the wedged streams had their first token.
				"only ttft_timeout (30 s) is armed and every silent request already received its first token: no armed timeout can end them"}},
	}, {
		// Before anything has been silent for stall_after, a wedged run is not yet called
		// stuck; the summary says nothing has finished.
		name:  "wedge, too early to tell",
		world: func() (*world, Config, float64) { w, c, _ := wedgeStarvation(); return w, c, 150 },
		want: want{kind: results.Healthy,
			summary: []string{"no request has finished yet after 150 s: 16 in flight, last byte or request end 50 s ago"}},
	}, {
		// One wedged stream among requests that keep completing: stalled-streams, named.
		name:  "one stream stalled",
		world: oneStalled,
		want: want{kind: results.StalledStreams,
			summary:  []string{"1 open stream received no byte for ≥ 250 s (longest 250 s) while the rest of the run still moves"},
			evidence: []string{"request a3-r1-0 (agent 3, permit 46): no byte for 250 s, sent 299 s ago, 940 chunks received"}},
	}, {
		// Agents wait long but six permit holders still complete requests: the pacer is
		// slow, not starved; the wedged ten are stalled streams.
		name:  "wedge with the pacer still turning",
		world: partlyWedged,
		want: want{kind: results.StalledStreams,
			summary:  []string{"10 open streams received no byte for ≥ 250 s"},
			evidence: []string{"10 of 16 open requests are silent; 14 agents wait in the pacer"}},
	}, {
		// A slots pacer that leaves agents waiting while permits are free starves them.
		name:  "lost wake-up",
		world: lostWakeUp,
		want: want{kind: results.PacerStarvation,
			summary:  []string{"3/4 agents starved in the pacer for up to 199 s while only 0 of 4 permits were held (a lost wake-up)"},
			evidence: []string{"invariant broken (no agent waits while a permit is free) in 264 samples: first at t=2.2 s 3 agents waited in the pacer while only 1 of 4 permits were in use (a lost wake-up)"}},
	}, {
		// A serialising server with its gauge: decode_running never above 1.
		name:  "serialized, with gauges",
		world: func() (*world, Config, float64) { return serialized(8, 400, true) },
		want: want{kind: results.ServerSerialized,
			summary:  []string{"requests in flight on average but the server progresses one at a time"},
			evidence: []string{"server view: decode_running max = 1, mean 1.00 over 533 samples", "harness view: in 533 of 533 samples with ≥ 4 open streams at most 1 stream received output in the last 1.0 s"}},
	}, {
		// The same without any server gauge: the harness's own view decides.
		name:  "serialized, no gauges",
		world: func() (*world, Config, float64) { return serialized(8, 400, false) },
		want: want{kind: results.ServerSerialized,
			evidence: []string{"server view: no decode_running gauge", "harness view: in 533 of 533 samples"}},
	}, {
		// 30 agents behind one decode slot: queued requests go silent for minutes, but
		// serialisation explains them (no output yet), so the verdict is server-serialized.
		name:  "serialized, long queue",
		world: func() (*world, Config, float64) { return serialized(30, 900, false) },
		want: want{kind: results.ServerSerialized,
			evidence: []string{"queued requests have received no output for ≥ 1"}},
	}, {
		// A decode_running gauge stuck at 1 while the harness sees many streams progress at
		// once is a lying gauge, not serialisation.
		name: "gauge lies",
		world: func() (*world, Config, float64) {
			w, cfg := parallel(8, 3, 30, 600)
			w.gauges = decodeRunning(func(float64) float64 { return 1 })
			return w, cfg, 0
		},
		want: want{kind: results.Healthy},
	}, {
		// 20 % of requests fail: errors, by class and status.
		name:  "20% errors",
		world: func() (*world, Config, float64) { w, c := withErrors(); return w, c, 0 },
		want: want{kind: results.Errors,
			summary:  []string{"10 of 50 finished requests failed (20.0 %)"},
			evidence: []string{"10 of 50 requests failed: 6 http_status 429, 4 error_frame"}},
	}, {
		// ocbrowse-like: 30 in flight × 3 750 tokens at ~640 tok/s take ~175 s: slow, and
		// Little's law says the latency is inherent to the load.
		name:  "ocbrowse slow",
		world: func() (*world, Config, float64) { w, c := parallel(30, 4, 175, 3750); return w, c, 0 },
		want: want{kind: results.Slow,
			summary: []string{"mean latency 175 s (p50 175 s) over 120 requests, inherent to the load"},
			evidence: []string{"Little's law: 29.8 requests in flight × 3750 output tokens per request ÷ 639 tok/s aggregate = 175 s expected; measured mean latency 175 s",
				"the latency is inherent to the load (measured within ±50 % of expected): 29.8 requests share 639 tok/s, about 21 tok/s each"}},
	}, {
		// smoke-like: a few short rounds, all fine.
		name:  "smoke healthy",
		world: func() (*world, Config, float64) { w, c := smoke(); return w, c, 0 },
		want: want{kind: results.Healthy,
			summary:  []string{"8 rounds completed, 8 requests ok, p50 latency 6.0 s"},
			evidence: []string{"requests: 8 sent, 8 ok, 0 errors, 0 timeouts, 0 cancelled, 0 in flight"},
			absent:   []string{"invariant broken"}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, cfg, at := c.world()
			kind, summary, evidence := judged(w, cfg, at)
			all := strings.Join(evidence, "\n")
			require.Equal(t, c.want.kind, kind, "verdict(%s) = %s: %s\n%s", c.name, kind, summary, all)
			for _, s := range c.want.summary {
				assert.Contains(t, summary, s)
			}
			for _, s := range c.want.evidence {
				assert.Contains(t, all, s)
			}
			for _, s := range c.want.absent {
				assert.NotContains(t, all, s)
			}
			assertUnits(t, evidence)
		})
	}
}

// assertUnits checks that every evidence line with a duration says it in seconds.
func assertUnits(t *testing.T, evidence []string) {
	t.Helper()
	for _, e := range evidence {
		for _, w := range []string{"for ", "after ", "longest "} {
			i := strings.Index(e, w)
			if i < 0 || !startsWithDigit(e[i+len(w):]) {
				continue
			}
			rest := e[i+len(w):]
			j := strings.IndexFunc(rest, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.' || r == '–') })
			assert.True(t, j > 0 && strings.HasPrefix(rest[j:], " s"), "no unit after %q in %q", w, e)
		}
	}
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// A stream that paused for longer than stall_after and then finished is no longer silent,
// but a stall that ends is still a stall: the verdict is stalled-streams, with the pause as
// evidence.
func TestPastStallInEvidence(t *testing.T) {
	a := New(Config{Agents: 1})
	for _, e := range []events.Event{
		{TS: 0, Kind: events.RoundStart},
		{TS: 1, Kind: events.RequestSent, Request: "a0-r1-0"},
		{TS: 3, Kind: events.FirstReasoning, Request: "a0-r1-0"},
		{TS: 201, Kind: events.Done, Request: "a0-r1-0", LatencyS: 200, TTFTS: 2, CompletionTokens: 1000, MaxGapS: 150},
		{TS: 201, Kind: events.RoundDone, Outcome: events.RoundOK},
		{TS: 201, Kind: events.AgentDone},
	} {
		a.Event(e)
	}
	v := a.Verdict(201)
	assert.Equal(t, results.StalledStreams, v.Kind, "%s %v", v.Summary, v.Evidence)
	assert.Equal(t, "1 stream stalled for ≥ 120 s (longest 150 s) and then went on: a stall that ends is still a stall", v.Summary)
	assert.Contains(t, strings.Join(v.Evidence, "\n"), "longest silence 150 s: request a0-r1-0 (agent 0) went without a byte while streaming, then resumed and finished ok")
	assert.Contains(t, strings.Join(v.Evidence, "\n"), "Little's law: 1.0 requests in flight × 1000 output tokens per request ÷ 5.0 tok/s aggregate = 200 s expected; measured mean latency 200 s")
}

// Servers send the role chunk as soon as they admit a request: a stream that got it and
// nothing else has received no output token, whatever its chunk count says.
func TestRoleChunkIsNoOutput(t *testing.T) {
	a := New(Config{Agents: 2, Timeouts: workloads.Timeouts{Request: 600 * time.Second}})
	for _, e := range []events.Event{
		{TS: 0, Agent: 0, Kind: events.RoundStart},
		{TS: 1, Agent: 0, Kind: events.RequestSent, Request: "a0-r1-0"},
		{TS: 1.1, Agent: 0, Kind: events.Headers, Request: "a0-r1-0"},
		{TS: 0, Agent: 1, Kind: events.RoundStart},
		{TS: 1, Agent: 1, Kind: events.RequestSent, Request: "a1-r1-0"},
		{TS: 2, Agent: 1, Kind: events.FirstReasoning, Request: "a1-r1-0"},
	} {
		a.Event(e)
	}
	a.Sample(events.Sample{TS: 200, InFlight: 2, Streams: []events.Stream{
		{Request: "a0-r1-0", Agent: 0, SentAgoS: 199, SinceLastByteS: 198.9, Chunks: 1},
		{Request: "a1-r1-0", Agent: 1, SentAgoS: 199, SinceLastByteS: 190, Chunks: 40},
	}})
	v := a.Verdict(200)
	require.Equal(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
	assert.Contains(t, v.Evidence, "request a0-r1-0 (agent 0): no byte for 199 s, sent 199 s ago, no output token received")
	assert.Contains(t, v.Evidence, "request a1-r1-0 (agent 1): no byte for 190 s, sent 199 s ago, 40 chunks received")
}

// Requests queued at the server are not stalled streams: 2 of 4 agents stream back to back
// on a 2-slot server while the other 2 wait 200 s for a first token, the server reporting
// them queued. Without the gauge the same silence is a stall.
func TestQueuedAtServerIsNoStall(t *testing.T) {
	build := func(gauge bool) (*world, Config) {
		w := newWorld(4, 4)
		for id := range 2 {
			a := w.agent(id, 0)
			for range 10 {
				a.round(0.5, 0, call{dur: 30, ttft: 1, tokens: 600}, 0.5)
			}
		}
		for id := 2; id < 4; id++ {
			w.agent(id, 0).read(1).wait(0).call(call{dur: inf, ttft: inf})
		}
		if gauge {
			w.gauges = func(float64) map[string]float64 {
				return map[string]float64{events.DecodeRunning: 2, events.Queued: 2}
			}
		}
		return w, Config{Agents: 4, PacerKind: "slots", PacerSlots: 4}
	}
	w, cfg := build(true)
	v := w.feed(cfg, 201).Verdict(201)
	require.NotEqual(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
	assert.Contains(t, v.Evidence, "2 silent requests have no output token yet while the server reports 2 requests queued: queueing, not a stall (longest wait 200 s)")

	w, cfg = build(false)
	v = w.feed(cfg, 201).Verdict(201)
	assert.Equal(t, results.StalledStreams, v.Kind, "without a queued gauge nothing says the server queues them")
}
