package diagnose

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// firstTokenRun feeds one agent's request sent at t=11 whose first token comes at t=161 (a
// silence of 150 s) and that finishes at t=170, with samples at t=10 and t=200, the second
// measuring the embedded simulator's lag simS.
func firstTokenRun(t *testing.T, simS float64) (results.Verdict, results.Results) {
	t.Helper()
	a := New(Config{Agents: 1})
	a.Event(events.Event{TS: 0, Kind: events.RoundStart})
	a.Sample(events.Sample{TS: 10})
	a.Event(events.Event{TS: 11, Kind: events.RequestSent, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 161, Kind: events.Headers, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 161, Kind: events.FirstReasoning, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 170, Kind: events.Done, Request: "a0-r1-0", LatencyS: 159, TTFTS: 150,
		CompletionTokens: 900, MaxGapS: 1, Chunks: 900})
	a.Event(events.Event{TS: 170, Kind: events.RoundDone, Outcome: events.RoundOK})
	a.Event(events.Event{TS: 170, Kind: events.AgentDone})
	a.Sample(events.Sample{TS: 200, SimLagS: simS})
	var r results.Results
	a.Fill(&r, 200)
	return r.Verdict, r
}

// A simulator behind its model delivers the first token late by its lag: the silence since the
// send is that much longer than the server it models would have made it. A first token 140 s
// late leaves 10 s of the 150 s silence: no stall.
func TestSimulatorLagIsNoStall(t *testing.T) {
	v, r := firstTokenRun(t, 140)
	assert.NotEqual(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
	assert.Equal(t, 0, r.Requests.Stalled, "requests.stalled counts what the verdict counts")

	v, r = firstTokenRun(t, 0)
	require.Equal(t, results.StalledStreams, v.Kind, "a simulator that keeps up explains nothing")
	assert.Equal(t, 1, r.Requests.Stalled)

	v, r = firstTokenRun(t, 20)
	require.Equal(t, results.StalledStreams, v.Kind, "150 s less 20 s of lag is still ≥ stall_after (120 s)")
	assert.Equal(t, 1, r.Requests.Stalled)
}

// A silence between two bytes is longer than the model's only by how much later its closing
// byte came than its opening one: a simulator that was 100 s behind at both ends (by the
// samples around each) explains none of a 180 s stall mid-stream; one that fell 70 s further
// behind meanwhile explains 70 s.
func TestSimulatorLagCountsItsGrowth(t *testing.T) {
	run := func(fromS, toS float64) (results.Verdict, results.Results) {
		a := New(Config{Agents: 1})
		a.Event(events.Event{TS: 0, Kind: events.RoundStart})
		a.Event(events.Event{TS: 1, Kind: events.RequestSent, Request: "a0-r1-0"})
		a.Event(events.Event{TS: 2, Kind: events.FirstReasoning, Request: "a0-r1-0"})
		a.Sample(events.Sample{TS: 5, SimLagS: fromS, InFlight: 1, Streams: []events.Stream{
			{Request: "a0-r1-0", Agent: 0, SentAgoS: 4, SinceLastByteS: 0, Chunks: 25}}})
		a.Sample(events.Sample{TS: 10, SimLagS: fromS, InFlight: 1, Streams: []events.Stream{
			{Request: "a0-r1-0", Agent: 0, SentAgoS: 9, SinceLastByteS: 0, Chunks: 50}}})
		a.Event(events.Event{TS: 190, Kind: events.Done, Request: "a0-r1-0", LatencyS: 189, TTFTS: 1,
			CompletionTokens: 100, MaxGapS: 180, Chunks: 100})
		a.Event(events.Event{TS: 190, Kind: events.RoundDone, Outcome: events.RoundOK})
		a.Event(events.Event{TS: 190, Kind: events.AgentDone})
		a.Sample(events.Sample{TS: 200, SimLagS: toS})
		var r results.Results
		a.Fill(&r, 200)
		return r.Verdict, r
	}
	v, r := run(100, 100)
	require.Equal(t, results.StalledStreams, v.Kind, "a steady lag delays both ends alike")
	assert.Equal(t, 1, r.Requests.Stalled)

	v, r = run(100, 170)
	assert.NotEqual(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
	assert.Equal(t, 0, r.Requests.Stalled)
}

// The watchdog judges an open silence, and the run's quiet time, net of the simulator's lag: a
// request silent since its send 189 s ago while the simulator is 185 s behind its model is not
// silent ≥ stall_after, and the run has not been quiet for hang_after — it is not ended.
func TestWatchdogNetOfSimulatorLag(t *testing.T) {
	watch := func(simS float64) Stall {
		a := New(Config{Agents: 1, StallAfter: 20 * time.Second, HangAfter: 150 * time.Second})
		a.Event(events.Event{TS: 0, Kind: events.RoundStart})
		a.Sample(events.Sample{TS: 10})
		a.Event(events.Event{TS: 11, Kind: events.RequestSent, Request: "a0-r1-0"})
		a.Sample(events.Sample{TS: 200, SimLagS: simS, InFlight: 1, Streams: []events.Stream{
			{Request: "a0-r1-0", Agent: 0, SentAgoS: 189, SinceLastByteS: 189}}})
		return a.Stall(200)
	}
	st := watch(185)
	assert.False(t, st.Hang, st.Message)
	assert.Zero(t, st.Stalled, st.Message)
	assert.InDelta(t, 15, st.NoProgressS, 1e-9, "200 s since the start less 185 s of lag")

	st = watch(0)
	assert.True(t, st.Hang, "without the simulator's lag the run is hung: %s", st.Message)
	assert.Equal(t, 1, st.Stalled)
}

// The harness may read a byte after the simulator delivered it: the first token of a request
// sent at t=11, delivered 140 s late before the sample at t=150 measured that, read at t=161,
// after it. The sample at t=200, which measures the interval the harness read it in, finds the
// simulator on time again; the byte still came 140 s late.
func TestSimulatorLagOfAByteReadLate(t *testing.T) {
	a := New(Config{Agents: 1})
	a.Event(events.Event{TS: 0, Kind: events.RoundStart})
	a.Sample(events.Sample{TS: 10})
	a.Event(events.Event{TS: 11, Kind: events.RequestSent, Request: "a0-r1-0"})
	a.Sample(events.Sample{TS: 150, SimLagS: 140, InFlight: 1, Streams: []events.Stream{
		{Request: "a0-r1-0", Agent: 0, SentAgoS: 139, SinceLastByteS: 139}}})
	a.Event(events.Event{TS: 161, Kind: events.Headers, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 161, Kind: events.FirstReasoning, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 170, Kind: events.Done, Request: "a0-r1-0", LatencyS: 159, TTFTS: 150,
		CompletionTokens: 900, MaxGapS: 1, Chunks: 900})
	a.Event(events.Event{TS: 170, Kind: events.RoundDone, Outcome: events.RoundOK})
	a.Event(events.Event{TS: 170, Kind: events.AgentDone})
	a.Sample(events.Sample{TS: 200})
	var r results.Results
	a.Fill(&r, 200)
	assert.NotEqual(t, results.StalledStreams, r.Verdict.Kind, "%s\n%s", r.Verdict.Summary, strings.Join(r.Verdict.Evidence, "\n"))
	assert.Equal(t, 0, r.Requests.Stalled)
}

// A sampler that fell behind takes no sample between the requests' send and the run's stop:
// the stop event carries the simulator's lag then, and the verdict judged at the stop counts
// it. Requests sent at t=11 and still silent at the grace stop at t=150, with the simulator
// 135 s behind, are not stalled streams; without that lag they are.
func TestSimulatorLagAtTheStop(t *testing.T) {
	run := func(simS float64) results.Verdict {
		a := New(Config{Agents: 1, StallAfter: 20 * time.Second})
		a.Event(events.Event{TS: 0, Kind: events.RoundStart})
		a.Sample(events.Sample{TS: 10})
		a.Event(events.Event{TS: 11, Kind: events.RequestSent, Request: "a0-r1-0"})
		a.Event(events.Event{TS: 150, Kind: events.Stop, Agent: -1, Reason: events.EndGrace, SimLagS: simS})
		a.Event(events.Event{TS: 150, Kind: events.Cancelled, Request: "a0-r1-0", SinceLastByteS: 139})
		a.Event(events.Event{TS: 150, Kind: events.RoundDone, Outcome: events.RoundFailed})
		a.Event(events.Event{TS: 150, Kind: events.AgentDone})
		return a.Verdict(150)
	}
	v := run(135)
	assert.NotEqual(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
	v = run(0)
	assert.Equal(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
}

// A silence that ended after the latest sample is credited again when the stop measures the
// simulator's lag: a stream silent from t=10 to t=100, its closing byte 95 s late by the stop's
// measure, is no stall in the verdict judged at the stop.
func TestSimulatorLagAtTheStopSettles(t *testing.T) {
	run := func(simS float64) results.Verdict {
		a := New(Config{Agents: 2, StallAfter: 20 * time.Second})
		a.Event(events.Event{TS: 0, Kind: events.RoundStart})
		a.Event(events.Event{TS: 0, Kind: events.RoundStart, Agent: 1})
		a.Event(events.Event{TS: 1, Kind: events.RequestSent, Request: "a0-r1-0"})
		a.Event(events.Event{TS: 2, Kind: events.FirstReasoning, Request: "a0-r1-0"})
		a.Event(events.Event{TS: 3, Kind: events.RequestSent, Agent: 1, Request: "a1-r1-0"})
		a.Event(events.Event{TS: 4, Kind: events.FirstReasoning, Agent: 1, Request: "a1-r1-0"})
		a.Sample(events.Sample{TS: 10, InFlight: 2, Streams: []events.Stream{
			{Request: "a0-r1-0", Agent: 0, SentAgoS: 9, SinceLastByteS: 0, Chunks: 50},
			{Request: "a1-r1-0", Agent: 1, SentAgoS: 7, SinceLastByteS: 0, Chunks: 50}}})
		a.Event(events.Event{TS: 100, Kind: events.Done, Request: "a0-r1-0", LatencyS: 99, TTFTS: 1,
			CompletionTokens: 100, MaxGapS: 90, Chunks: 100})
		a.Event(events.Event{TS: 100, Kind: events.RoundDone, Outcome: events.RoundOK})
		a.Event(events.Event{TS: 100, Kind: events.AgentDone})
		a.Event(events.Event{TS: 110, Kind: events.Stop, Agent: -1, Reason: events.EndGrace, SimLagS: simS})
		a.Event(events.Event{TS: 110, Kind: events.Cancelled, Agent: 1, Request: "a1-r1-0", SinceLastByteS: 0.1, MaxGapS: 0.1})
		a.Event(events.Event{TS: 110, Kind: events.RoundDone, Agent: 1, Outcome: events.RoundFailed})
		a.Event(events.Event{TS: 110, Kind: events.AgentDone, Agent: 1})
		return a.Verdict(110)
	}
	v := run(95)
	assert.NotEqual(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
	v = run(0)
	assert.Equal(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
}

// The simulator's credit counts against what the harness's lag leaves of a silence once both
// are settled: a first token 91 s after the send, with the harness 25 s behind in the sample
// before it and 2 s in the one after, and the simulator 89 s behind in the one after, is no
// stall (a smoke run at --speedup 10000 where the order of the two settlements made it one).
func TestSimulatorLagAfterTheHarnessLag(t *testing.T) {
	a := New(Config{Agents: 1, StallAfter: 20 * time.Second})
	a.Event(events.Event{TS: 0, Kind: events.RoundStart})
	a.Sample(events.Sample{TS: 64.71, SimLagS: 24})
	a.Event(events.Event{TS: 99.25, Kind: events.RequestSent, Request: "a0-r2-0"})
	a.Sample(events.Sample{TS: 133.48, LagS: 25.3, SimLagS: 29.3, InFlight: 1, Streams: []events.Stream{
		{Request: "a0-r2-0", Agent: 0, SentAgoS: 34.23, SinceLastByteS: 34.23}}})
	a.Event(events.Event{TS: 190.23, Kind: events.Headers, Request: "a0-r2-0"})
	a.Event(events.Event{TS: 190.25, Kind: events.FirstReasoning, Request: "a0-r2-0"})
	a.Event(events.Event{TS: 192, Kind: events.Done, Request: "a0-r2-0", LatencyS: 92.75, TTFTS: 91,
		CompletionTokens: 100, MaxGapS: 1, Chunks: 100})
	a.Event(events.Event{TS: 192, Kind: events.RoundDone, Outcome: events.RoundOK})
	a.Event(events.Event{TS: 192, Kind: events.AgentDone})
	a.Sample(events.Sample{TS: 195.94, LagS: 1.86, SimLagS: 88.6})
	v := a.Verdict(195.94)
	assert.NotEqual(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
	assert.Zero(t, a.stalledCount(195.94))
}

// perRequestRun feeds two agents' requests while the embedded simulator falls ever further
// behind its model (sim_lag_s 10, 70, 100 s): a0-r1-0 gets its first token at t=2, then
// wedges — its model gives it no more, so its own lag reads 0 — and is silent to t=100;
// a1-r1-0, sent at t=2, gets its first token at t=61, 58 s late by its own lag, and finishes.
// perRequest says whether the samples carry each request's own lag (older files do not).
func perRequestRun(perRequest bool) (results.Verdict, results.Results) {
	a := New(Config{Agents: 2, StallAfter: 20 * time.Second})
	own := func(s float64) float64 {
		if perRequest {
			return s
		}
		return 0
	}
	a.Event(events.Event{TS: 0, Kind: events.RoundStart})
	a.Event(events.Event{TS: 0, Kind: events.RoundStart, Agent: 1})
	a.Sample(events.Sample{TS: 1, SimLagPerRequest: perRequest})
	a.Event(events.Event{TS: 1, Kind: events.RequestSent, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 2, Kind: events.Headers, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 2, Kind: events.FirstReasoning, Request: "a0-r1-0"})
	a.Event(events.Event{TS: 2, Kind: events.RequestSent, Agent: 1, Request: "a1-r1-0"})
	a.Sample(events.Sample{TS: 5, SimLagS: 10, SimLagPerRequest: perRequest, InFlight: 2, Streams: []events.Stream{
		{Request: "a0-r1-0", Agent: 0, SentAgoS: 4, SinceLastByteS: 3, Chunks: 5},
		{Request: "a1-r1-0", Agent: 1, SentAgoS: 3, SinceLastByteS: 3}}})
	a.Sample(events.Sample{TS: 60, SimLagS: 70, SimLagPerRequest: perRequest, InFlight: 2, Streams: []events.Stream{
		{Request: "a0-r1-0", Agent: 0, SentAgoS: 59, SinceLastByteS: 58, Chunks: 5},
		{Request: "a1-r1-0", Agent: 1, SentAgoS: 58, SinceLastByteS: 58, SimLagS: own(55)}}})
	a.Event(events.Event{TS: 61, Kind: events.Headers, Agent: 1, Request: "a1-r1-0", SimLagS: own(58)})
	a.Event(events.Event{TS: 61, Kind: events.FirstReasoning, Agent: 1, Request: "a1-r1-0", SimLagS: own(58)})
	a.Event(events.Event{TS: 65, Kind: events.Done, Agent: 1, Request: "a1-r1-0", LatencyS: 63, TTFTS: 59,
		CompletionTokens: 100, MaxGapS: 1, Chunks: 100, SimLagS: own(58)})
	a.Event(events.Event{TS: 65, Kind: events.RoundDone, Agent: 1, Outcome: events.RoundOK})
	a.Event(events.Event{TS: 65, Kind: events.AgentDone, Agent: 1})
	a.Sample(events.Sample{TS: 100, SimLagS: 100, SimLagPerRequest: perRequest, InFlight: 1, Streams: []events.Stream{
		{Request: "a0-r1-0", Agent: 0, SentAgoS: 99, SinceLastByteS: 98, Chunks: 5}}})
	var r results.Results
	a.Fill(&r, 100)
	return r.Verdict, r
}

// Each request's silence is credited with its own lag in the simulator only: the wedged
// request, though the simulator is 100 s behind on others, is a stalled stream; the one whose
// first token came 58 s late by its own lag is not.
func TestSimulatorLagIsEachRequests(t *testing.T) {
	v, r := perRequestRun(true)
	require.Equal(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
	all := v.Summary + "\n" + strings.Join(v.Evidence, "\n")
	assert.Contains(t, all, "a0-r1-0", "the wedged request is named")
	assert.NotContains(t, all, "a1-r1-0", "the late one is not")
	assert.Equal(t, 1, r.Requests.Stalled)
}

// Files without each request's lag keep the credit of the simulator's largest lag: the wedged
// silence is credited with the others' lateness, as such runs were judged.
func TestSimulatorLagWithoutPerRequest(t *testing.T) {
	v, r := perRequestRun(false)
	assert.NotEqual(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
	assert.Equal(t, 0, r.Requests.Stalled)
}
