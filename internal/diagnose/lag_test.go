package diagnose

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// lagRun feeds one agent's request that streams, goes silent from t=10 to t=190 and then
// finishes, with samples at t=10 and t=200 only, the second measuring the harness's
// scheduling lag lagS and the sampler's own lateness lateS.
func lagRun(t *testing.T, lagS, lateS float64) (results.Verdict, results.Results) {
	t.Helper()
	a := New(Config{Agents: 1})
	a.Event(events.Event{TS: 0, Kind: events.RoundStart})
	a.Event(events.Event{TS: 1, Kind: events.RequestSent, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 2, Kind: events.FirstReasoning, Request: "a0-r1-0"})
	a.Sample(events.Sample{TS: 10, InFlight: 1, Streams: []events.Stream{
		{Request: "a0-r1-0", Agent: 0, SentAgoS: 9, SinceLastByteS: 0, Chunks: 50}}})
	a.Event(events.Event{TS: 190, Kind: events.Done, Request: "a0-r1-0", LatencyS: 189, TTFTS: 1,
		CompletionTokens: 100, MaxGapS: 180, Chunks: 100})
	a.Event(events.Event{TS: 190, Kind: events.RoundDone, Outcome: events.RoundOK})
	a.Event(events.Event{TS: 190, Kind: events.AgentDone})
	a.Sample(events.Sample{TS: 200, LateS: lateS, LagS: lagS})
	var r results.Results
	a.Fill(&r, 200)
	return r.Verdict, r
}

// A silence the harness could not observe is no stall: when the samples around it measured
// the harness that far behind its schedule, the byte that ended it may have waited in the
// socket all that while. The silence counts less that lag; requests.stalled and the verdict
// agree on it.
func TestLagIsNoStall(t *testing.T) {
	v, r := lagRun(t, 189, 189)
	assert.NotEqual(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
	assert.Equal(t, 0, r.Requests.Stalled, "requests.stalled counts what the verdict counts")

	v, r = lagRun(t, 0, 0)
	require.Equal(t, results.StalledStreams, v.Kind, "without lag the same silence is a stall")
	assert.Equal(t, 1, r.Requests.Stalled)

	// A sampler late because /metrics took long to answer says nothing of how late the
	// harness read its streams: late_s alone excuses nothing.
	v, r = lagRun(t, 0, 189)
	require.Equal(t, results.StalledStreams, v.Kind, "a slow scrape is no lag")
	assert.Equal(t, 1, r.Requests.Stalled)
	assert.Contains(t, v.Evidence[0], "longest silence 180 s: request a0-r1-0 (agent 0) received no byte from t=10 s to t=190 s while streaming")
}

// The queued gauge's reading holds until the next sample: a request sent just after a sample
// that found the server queueing, whose first token came 150 s later, before the next sample
// (200 s apart: longer than stall_after), waited in the queue. Before, only a sample taken
// inside the silence could say so, and a sparse or late sampler turned queueing into
// stalled-streams.
func TestQueuedGaugeCarriesBetweenSamples(t *testing.T) {
	run := func(queued float64) (results.Verdict, results.Results) {
		a := New(Config{Agents: 1})
		a.Event(events.Event{TS: 0, Kind: events.RoundStart})
		a.Sample(events.Sample{TS: 10, Server: map[string]float64{events.Queued: queued, events.DecodeRunning: 2}})
		a.Event(events.Event{TS: 11, Kind: events.RequestSent, Request: "a0-r1-0"})
		a.Event(events.Event{TS: 161, Kind: events.Headers, Request: "a0-r1-0"})
		a.Event(events.Event{TS: 161, Kind: events.FirstReasoning, Request: "a0-r1-0"})
		a.Event(events.Event{TS: 170, Kind: events.Done, Request: "a0-r1-0", LatencyS: 159, TTFTS: 150,
			CompletionTokens: 900, MaxGapS: 1, Chunks: 900})
		a.Event(events.Event{TS: 170, Kind: events.RoundDone, Outcome: events.RoundOK})
		a.Event(events.Event{TS: 170, Kind: events.AgentDone})
		a.Sample(events.Sample{TS: 210, Server: map[string]float64{events.Queued: 0, events.DecodeRunning: 0}})
		var r results.Results
		a.Fill(&r, 210)
		return r.Verdict, r
	}
	v, r := run(3)
	assert.NotEqual(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
	assert.Equal(t, 1, r.Requests.Stalled, "it went 150 s without a byte: counted, and explained as queueing")

	v, _ = run(0)
	assert.Equal(t, results.StalledStreams, v.Kind, "with no queued work reported, a 150 s wait for the first byte is a stall")
}

// A request the run's stop cancelled after a silence of stall_after counts in requests.stalled
// (as the verdict's evidence says, not as a stall that ended); the events alone tell it when
// there are no samples.
func TestCancelledSilenceCounts(t *testing.T) {
	a := New(Config{Agents: 1})
	a.Event(events.Event{TS: 0, Kind: events.RoundStart})
	a.Event(events.Event{TS: 1, Kind: events.RequestSent, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 2, Kind: events.FirstReasoning, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 140, Kind: events.Cancelled, Request: "a0-r1-0", SinceLastByteS: 138})
	var r results.Results
	a.Fill(&r, 140)
	assert.Equal(t, 1, r.Requests.Stalled)
}

// A sample that names a stream again with the same last byte, moved by the rounding of
// "sample time − silence", neither ends the silence nor forgets the lag measured over it.
func TestSameByteAgainKeepsLag(t *testing.T) {
	a := New(Config{Agents: 1})
	a.Event(events.Event{TS: 0, Kind: events.RoundStart})
	a.Event(events.Event{TS: 1, Kind: events.RequestSent, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 2, Kind: events.FirstReasoning, Request: "a0-r1-0"})
	stream := func(ts, lateS, since float64) events.Sample {
		return events.Sample{TS: ts, LagS: lateS, InFlight: 1, Streams: []events.Stream{
			{Request: "a0-r1-0", Agent: 0, SentAgoS: ts - 1, SinceLastByteS: since, Chunks: 50}}}
	}
	a.Sample(stream(10, 0, 0))
	a.Sample(stream(140, 130, 130))    // a sleep ran 130 s late: the harness did not run
	a.Sample(stream(141, 0, 131-1e-7)) // the byte of t=10, read back a hair later
	v := a.Verdict(141)
	assert.NotEqual(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
	assert.Equal(t, 0, a.stalledCount(141))
}

// The stream reader saw every byte; a sample only bounds when one came. A silence after the
// first byte is never longer than the gap the terminal event's max_gap_s reports.
func TestSilenceHeldToReadersGap(t *testing.T) {
	a := New(Config{Agents: 1})
	a.Event(events.Event{TS: 0, Kind: events.RoundStart})
	a.Event(events.Event{TS: 1, Kind: events.RequestSent, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 2, Kind: events.FirstReasoning, Request: "a0-r1-0"})
	a.Sample(events.Sample{TS: 10, InFlight: 1, Streams: []events.Stream{
		{Request: "a0-r1-0", Agent: 0, SentAgoS: 9, SinceLastByteS: 0, Chunks: 50}}})
	a.Event(events.Event{TS: 132, Kind: events.Done, Request: "a0-r1-0", LatencyS: 131, TTFTS: 1,
		CompletionTokens: 100, MaxGapS: 113.8, Chunks: 100})
	a.Event(events.Event{TS: 132, Kind: events.RoundDone, Outcome: events.RoundOK})
	a.Event(events.Event{TS: 132, Kind: events.AgentDone})
	var r results.Results
	a.Fill(&r, 132)
	assert.NotEqual(t, results.StalledStreams, r.Verdict.Kind, "%s\n%s", r.Verdict.Summary, strings.Join(r.Verdict.Evidence, "\n"))
	assert.Equal(t, 0, r.Requests.Stalled)
}

// The scenario of "requests queued at a 2-slot server" seen by a sampler that fell behind:
// 2 of 4 agents stream back to back while the other 2 wait 150 s in the server's queue for
// their first token, and no sample lands inside that wait — the one before it found the
// server queueing, the next comes after it. Queueing still, not stalled-streams; the same
// samples with the server reporting no queue are a stall.
func TestQueuedBetweenLateSamples(t *testing.T) {
	build := func(queued float64) (*world, Config) {
		w := newWorld(4, 4)
		for id := range 2 {
			a := w.agent(id, 0)
			for range 10 {
				a.round(0.5, 0, call{dur: 30, ttft: 1, tokens: 600}, 0.5)
			}
		}
		for id := 2; id < 4; id++ {
			w.agent(id, 0).read(1).wait(0).call(call{dur: 160, ttft: 150, tokens: 600})
		}
		w.gauges = func(float64) map[string]float64 {
			return map[string]float64{events.DecodeRunning: 2, events.Queued: queued}
		}
		return w, Config{Agents: 4, PacerKind: "slots", PacerSlots: 4}
	}
	judge := func(queued float64) results.Results {
		w, cfg := build(queued)
		a := New(cfg)
		var late []events.Sample
		for _, s := range w.samples(200) {
			if s.TS < 1 || s.TS > 170 { // the sampler fell behind for 169 s
				late = append(late, s)
			}
		}
		Replay(a, w.sorted(), late)
		var r results.Results
		a.Fill(&r, 200)
		return r
	}
	r := judge(2)
	assert.NotEqual(t, results.StalledStreams, r.Verdict.Kind, "%s\n%s", r.Verdict.Summary, strings.Join(r.Verdict.Evidence, "\n"))
	assert.Equal(t, 2, r.Requests.Stalled, "both waited ≥ stall_after without a byte: counted, and explained as queueing")

	r = judge(0)
	assert.Equal(t, results.StalledStreams, r.Verdict.Kind, "with no queue reported, the wait is a stall")
	assert.Equal(t, 2, r.Requests.Stalled)
}
