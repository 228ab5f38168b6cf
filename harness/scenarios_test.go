package harness

import (
	"bytes"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
)

// scenarioRun is what a diagnosis scenario's checks read: the results the run returned and
// the events it recorded.
type scenarioRun struct {
	res *results.Results
	evs []events.Event
}

// watchdogEnded reports whether the watchdog recorded that it ended the run.
func (r scenarioRun) watchdogEnded() bool {
	for _, e := range r.evs {
		if e.Kind == events.Warning && e.Agent < 0 && strings.HasPrefix(e.Message, "watchdog: ending the run: ") {
			return true
		}
	}
	return false
}

// watchdogEndedAfterHang reports whether the watchdog's ending message says the run went
// hang_after without progress.
func (r scenarioRun) watchdogEndedAfterHang() bool {
	for _, e := range r.evs {
		if e.Kind == events.Warning && e.Agent < 0 && strings.HasPrefix(e.Message, "watchdog: ending the run: no progress for ") &&
			strings.Contains(e.Message, "≥ hang_after") {
			return true
		}
	}
	return false
}

// scenario is one row of the diagnosis table: a whole run of the real harness against the
// real simulator, and what its verdict must say.
type scenario struct {
	name string
	sim  simCase
	kind results.VerdictKind
	// summary must match the verdict's summary; evidence lists patterns each matched by some
	// evidence line.
	summary  string
	evidence []string
	// heavy runs are ocbrowse-sized: 60–250 k output tokens stream through the simulator,
	// 1–3 s of wall time each but ten times that under the race detector, which skips them
	// (the smoke-sized runs, here and in package cmd, still take the same code paths).
	heavy bool
	check func(t *testing.T, r scenarioRun)
}

// ocbrowseDurationS is ocbrowse's duration (60 m), in simulated seconds.
const ocbrowseDurationS = 60 * 60

var scenarios = []scenario{{
	// The smoke workload on a healthy simulator: every round completes, fast.
	name:    "smoke, healthy",
	sim:     simCase{workload: "smoke", speedup: 20},
	kind:    results.Healthy,
	summary: `^8 rounds completed, 8 requests ok, p50 latency \d+\.\d s$`,
	evidence: []string{
		`^requests: 8 sent, 8 ok, 0 errors, 0 timeouts, 0 cancelled, 0 in flight$`,
		`^Little's law: `,
	},
	check: func(t *testing.T, r scenarioRun) {
		assert.Equal(t, r.res.Rounds.Planned, r.res.Rounds.Completed, "rounds %+v", r.res.Rounds)
	},
}, {
	// ocbrowse --rounds 2 on a healthy simulator: 30 agents share the decoder, so each
	// 3000–4500-token response takes minutes. Slow, not stuck: Little's law explains it.
	name:    "ocbrowse, healthy",
	sim:     simCase{workload: "ocbrowse", overrides: map[string]string{"rounds": "2"}, speedup: 100},
	kind:    results.Slow,
	summary: `^requests complete but slowly: mean latency \d+ s \(p50 \d+ s\) over 60 requests, inherent to the load$`,
	evidence: []string{
		`^60 requests ok with mean e2e latency \d+ s \(p50 \d+ s, p90 \d+ s, max \d+ s\) ≥ the slow threshold of 60 s; TTFT p50 \d+\.\d s$`,
		`^Little's law: \d+\.\d requests in flight × \d+ output tokens per request ÷ \d+ tok/s aggregate = \d+ s expected; measured mean latency \d+ s$`,
		`^the latency is inherent to the load \(measured within ±50 % of expected\): \d+\.\d requests share \d+ tok/s, about \d+ tok/s each$`,
		`^tokens flow: \d+ output tokens streamed at \d+ tok/s aggregate over \d+ s; last byte or request end \d+\.\d s ago$`,
	},
	heavy: true,
	check: func(t *testing.T, r scenarioRun) {
		// docs/engine.md §6: per-request latency 100–300 s.
		e2e := r.res.Latency.E2E
		assert.True(t, e2e.Mean >= 100 && e2e.Mean <= 300, "mean e2e latency %.1f s, want 100–300 s", e2e.Mean)
		assert.Equal(t, 60, r.res.Rounds.Completed, "rounds %+v", r.res.Rounds)
		assert.False(t, r.watchdogEnded())
	},
}, {
	// The serialize fault (decode batch of one) under 16 ocbrowse agents. One round is
	// enough: 16 requests in flight at once, served one at a time.
	name: "serialize, 16 agents",
	sim: simCase{workload: "ocbrowse", overrides: map[string]string{"agents": "16", "rounds": "1"},
		faults: []string{"serialize"}, speedup: 100},
	kind:    results.ServerSerialized,
	summary: `^\d+\.\d requests in flight on average but the server progresses one at a time \(mean e2e latency \d+ s\)$`,
	evidence: []string{
		`^mean \d+\.\d requests in flight, yet only one progressed at a time; 16 requests finished ok at \d+ tok/s aggregate$`,
		`^server view: decode_running max = 1, mean \d\.\d\d over \d+ samples$`,
		`^harness view: in \d+ of \d+ samples with ≥ 4 open streams at most 1 stream received output in the last 1\.0 s`,
	},
	heavy: true,
	check: func(t *testing.T, r scenarioRun) {
		assert.Equal(t, 16, r.res.Requests.OK)
		assert.LessOrEqual(t, r.res.Server.DecodeRunning.Max, 1.0)
	},
}, {
	// The incident: long-context-wedge at its defaults (32768 tokens, 0.001 per decode step)
	// behind a 16-slot pacer, 30 agents, no timeouts. Contexts pass 32 k in round 2–3, the
	// wedged streams keep their permits, the other 14 agents starve in the pacer. The
	// server could still resume the streams, so the watchdog ends the run only after
	// hang_after (600 s) without progress.
	name: "long-context-wedge, 16 slots",
	sim: simCase{workload: "ocbrowse", overrides: map[string]string{"pacer.slots": "16"},
		faults: []string{"long-context-wedge"}, speedup: 100},
	kind:    results.PacerStarvation,
	summary: `^14/30 agents starved in the pacer for up to \d+ s while all 16 permits were held by requests that had received no byte for ≥ \d+ s$`,
	evidence: []string{
		`^14/30 agents have waited in the pacer for \d+–\d+ s \(agents (\d+, ){7}\d+ and 6 more\)$`,
		`^16 of 16 permits held: 16 by requests silent for ≥ 120 s, 0 leaked, 0 by work still moving \(the silent ones for \d+–\d+ s\)$`,
		`^request a\d+-r[23]-0 \(agent \d+, permit \d+\): no byte for \d+ s, sent \d+ s ago, \d+ chunks received$`,
		`^no timeout is armed \(timeout, ttft_timeout and idle_timeout are 0 s\): nothing ends a silent request$`,
		`^server decode_running = 0 for \d+ s, prefill_inflight = 0 for \d+ s, queued = 0 for \d+ s while 16 requests are in flight$`,
		`^judged as the run stood at t=\d+ s, when the harness began stopping it: the stop then cancelled 16 requests in flight and 14 pacer waits$`,
	},
	heavy: true,
	check: func(t *testing.T, r scenarioRun) { assertWedgeEndedEarly(t, r) },
}, {
	// The same wedge with ocbrowse's own 30 slots: every agent ends up inside a wedged
	// request and nothing can ever end one.
	name:    "long-context-wedge, 30 slots",
	sim:     simCase{workload: "ocbrowse", faults: []string{"long-context-wedge"}, speedup: 100},
	kind:    results.Deadlock,
	summary: `^every running agent \(30/30\) waits on a request silent for ≥ \d+ s and no timeout is armed: nothing can wake the run$`,
	evidence: []string{
		`^30/30 running agents are inside requests that have received no byte for ≥ \d+ s \(longest \d+ s\); none waits in the pacer$`,
		`^request a\d+-r[23]-0 \(agent \d+, permit \d+\): no byte for \d+ s, sent \d+ s ago, \d+ chunks received$`,
		`^… and 22 more silent requests$`,
		`^what the server was doing: the 30 silent requests carry long prompts, [\d.]+–[\d.]+ k tokens, where \d+ of the \d+ requests that finished carried as much \([\d.]+ k tokens at most\): the server stops on long contexts, mid-answer: each had begun its output; at the prompt rate the server showed, \d+ tokens/s of time to first token over \d+ requests, a [\d.]+ k-token prompt takes [\d.]+ s to prefill, and the longest silence is \d+ s$`,
		`^no timeout is armed \(timeout, ttft_timeout and idle_timeout are 0 s\): nothing ends a silent request$`,
		`^server decode_running = 0 for \d+ s`,
		`^judged as the run stood at t=\d+ s, when the harness began stopping it: the stop then cancelled 30 requests in flight and 0 pacer waits$`,
	},
	heavy: true,
	check: func(t *testing.T, r scenarioRun) { assertWedgeEndedEarly(t, r) },
}, {
	// The same wedge with idle_timeout 60 s: each wedged stream ends 60 s after its last
	// byte, its round fails and the agent goes on to the next. Not a hang: the timeouts are
	// failures, counted by class. Four rounds, so that agents go on after round-3 wedges.
	name: "long-context-wedge, idle timeout 60 s",
	sim: simCase{workload: "ocbrowse", overrides: map[string]string{"request.idle_timeout": "60s", "rounds": "4"},
		faults: []string{"long-context-wedge"}, speedup: 100},
	kind:    results.Errors,
	summary: `^\d+ of 120 finished requests failed \(\d+\.\d %\)$`,
	evidence: []string{
		`^\d+ of 120 requests failed: \d+ timeout_idle$`,
		`^0 errors, \d+ timeouts, 0 retries, 0 cancelled; rounds: \d+ completed, \d+ failed$`,
		`^the \d+ requests that succeeded took \d+ s on average \(p50 \d+ s\)$`,
	},
	heavy: true,
	check: func(t *testing.T, r scenarioRun) {
		q, rounds := r.res.Requests, r.res.Rounds
		assert.Positive(t, q.Timeouts)
		assert.Equal(t, q.Timeouts, q.Sent-q.OK, "every failure is a timeout: %+v", q)
		assert.Positive(t, rounds.Completed)
		// Recovered: every planned round ran to its end, none was cut by the watchdog.
		assert.Equal(t, rounds.Planned, rounds.Completed+rounds.Failed, "rounds %+v", rounds)
		assert.Zero(t, q.Cancelled)
		assert.False(t, r.watchdogEnded())
	},
}, {
	// prefill-pin at its default fraction 0.1: one request in ten never leaves prefill; its
	// stream stays open and silent. duration 400 s ends new rounds mid-run and the 30 s grace
	// then cancels what is in flight, so the verdict is judged while the unpinned agents still
	// stream. (Left to finish, a run without timeouts ends with only pinned agents: a deadlock.)
	// 400 s + 30 s is off the 0.75 s sampling grid, so the stop never shares an instant with a
	// sample.
	name: "prefill-pin",
	sim: simCase{workload: "ocbrowse", overrides: map[string]string{"duration": "400s"},
		faults: []string{"prefill-pin"}, speedup: 100},
	kind:    results.StalledStreams,
	summary: `^\d+ open streams received no byte for ≥ \d+ s \(longest \d+ s\) while the rest of the run still moves \(last byte or request end \d\.\d s ago\)$`,
	evidence: []string{
		`^request a\d+-r\d-0 \(agent \d+, permit \d+\): no byte for \d+ s, sent \d+ s ago, no output token received$`,
		`^\d+ of \d+ open requests are silent; 0 agents wait in the pacer$`,
		`^server decode_running = \d+ for \d+(\.\d)? s, prefill_inflight = [1-9]\d* for \d+ s`,
		`^judged as the run stood at t=430 s, when the harness began stopping it: the stop then cancelled \d+ requests in flight and 0 pacer waits$`,
	},
	heavy: true,
	check: func(t *testing.T, r scenarioRun) {
		assert.InDelta(t, 430, r.res.SimSeconds, 1)
		assert.False(t, r.watchdogEnded())
	},
}, {
	// errors at rate 0.2, kind mix (the default: 429 with Retry-After, 503, or an error frame
	// inside the stream), no retries. The failure ratio is what matters, not the load, so a
	// smoke-sized run of 50 requests (10 agents × 5 rounds) does.
	name: "errors 20 %",
	sim: simCase{workload: "smoke", overrides: map[string]string{"agents": "10", "rounds": "5"},
		faults: []string{"errors"}, faultParams: []string{"rate=0.2"}, speedup: 20},
	kind:    results.Errors,
	summary: `^\d+ of 50 finished requests failed \(\d+\.\d %\): http_status 503 "The server is overloaded or not ready yet\."$`,
	evidence: []string{
		`^\d+ of 50 requests failed: .*http_status 429`,
		`^\d+ of 50 requests failed: .*http_status 503`,
		`^\d+ of 50 requests failed: .*\d+ error_frame(,|$)`,
		`^\d+ errors, 0 timeouts, 0 retries, 0 cancelled; rounds: \d+ completed, \d+ failed$`,
	},
	check: func(t *testing.T, r scenarioRun) {
		q := r.res.Requests
		ratio := float64(q.Errors) / float64(q.Sent)
		assert.True(t, ratio >= 0.1 && ratio <= 0.3, "%d of %d requests failed, want about 20 %%", q.Errors, q.Sent)
	},
}, {
	// stall-stream at fraction 0.5 with its default 60 s pause, idle_timeout 30 s and
	// pacer.leak_on_timeout: a paused stream is abandoned after 30 s of silence but keeps its
	// permit. Half the requests pausing, ocbrowse's 30 permits all leak within two rounds,
	// every agent waits for one, and the watchdog ends the run once the last has waited its
	// 600 s. ocbrowse's original harness, a read step each round (tools.set none): its long
	// replies keep the server busy, and requests queued behind them time out too; through
	// tools the replies between calls are short, only the paused streams time out, and the
	// permits take 430 s instead of 250–380 s (which streams pause is drawn per request) to
	// leak.
	name: "stall-stream, leak_on_timeout",
	sim: simCase{workload: "ocbrowse", overrides: map[string]string{"request.idle_timeout": "30s", "pacer.leak_on_timeout": "true", "tools.set": "none"},
		faults: []string{"stall-stream"}, faultParams: []string{"fraction=0.5"}, speedup: 100,
		// A role chunk at admission arms the idle timeout while requests still queue, so
		// permits leak early; with nothing sent before the first token only a TTFT timeout
		// could end those waits, and the run takes longer to starve.
		firstByte: simserver.FirstByteAtAdmission},
	kind:    results.PacerStarvation,
	summary: `^30/30 agents starved in the pacer for up to \d+ s while all 30 permits were leaked by requests that ended without releasing them$`,
	evidence: []string{
		`^30/30 agents have waited in the pacer for \d+(\.\d)?–\d+ s \(agents (\d+, ){7}\d+ and 22 more\)$`,
		`^30 of 30 permits held: 0 by requests silent for ≥ 120 s, 30 leaked, 0 by work still moving$`,
		`^permit \d+ \(agent \d+\) leaked at t=\d+ s: its request ended without releasing it; held for \d+ s$`,
		`^… and 22 more leaked permits$`,
		`^pacer leak_on_timeout is set: a request that times out keeps its permit for ever$`,
		`^timeouts are armed but no request is open for them to end$`,
		`^judged as the run stood at t=\d+ s, when the harness began stopping it: the stop then cancelled 0 requests in flight and 30 pacer waits$`,
	},
	heavy: true,
	check: func(t *testing.T, r scenarioRun) {
		assert.GreaterOrEqual(t, r.res.Requests.Timeouts, 30)
		assert.True(t, r.watchdogEnded(), "the watchdog should end a run whose permits all leaked")
		assert.Less(t, r.res.SimSeconds, float64(ocbrowseDurationS)/3)
	},
}}

// The scenarios of the rules that keep verdicts honest (docs/verdicts.md §3): each is a run
// that was misjudged before the rule.
var honestScenarios = []scenario{{
	// A stall that ends is not a deadlock: every smoke stream pauses once for 40 s, longer
	// than smoke's stall_after (20 s) but shorter than its hang_after (60 s), then resumes.
	// With no timeout armed, nothing but the server can wake the paused streams — and it
	// does: the run completes, and its verdict is stalled-streams with the longest silence.
	name: "stall-stream recovers",
	sim: simCase{workload: "smoke", faults: []string{"stall-stream"}, faultParams: []string{"fraction=1", "duration=40s"},
		speedup: 20},
	kind:    results.StalledStreams,
	summary: `^\d+ streams? stalled for ≥ 20 s \(longest 4\d s\) and then went on: a stall that ends is still a stall$`,
	evidence: []string{
		`^longest silence 4\d s: request a\d+-r\d-0 \(agent \d+\) received no byte from t=\d+(\.\d)? s to t=\d+ s while streaming, then resumed and finished ok$`,
		`^rounds: 8 completed, 0 failed; requests: 8 ok, 0 failed$`,
	},
	check: func(t *testing.T, r scenarioRun) {
		assert.Equal(t, r.res.Rounds.Planned, r.res.Rounds.Completed, "rounds %+v", r.res.Rounds)
		assert.False(t, r.watchdogEnded(), "the watchdog ended a run whose streams were about to resume")
	},
}, {
	// A timeout counts only if it can still fire: a wedge that hits after the first token
	// (threshold 500 tokens, so every smoke context passes it) with only ttft_timeout armed.
	// The TTFT timeout cannot end those streams: after hang_after (60 s) without progress it
	// is a deadlock.
	name: "wedge after the first token, ttft_timeout",
	sim: simCase{workload: "smoke", overrides: map[string]string{"request.ttft_timeout": "30s"},
		faults: []string{"long-context-wedge"}, faultParams: []string{"threshold_tokens=500", "probability=0.2"}, speedup: 20},
	kind:    results.Deadlock,
	summary: `^every running agent \(4/4\) waits on a request silent for ≥ \d+ s and no armed timeout can end one: nothing can wake the run$`,
	evidence: []string{
		`^only ttft_timeout \(30 s\) is armed and every silent request already received its first token: no armed timeout can end them$`,
		`^nothing has moved for \d+ s, ≥ the hang threshold of 60 s`,
	},
	check: func(t *testing.T, r scenarioRun) {
		assert.True(t, r.watchdogEndedAfterHang(), "the watchdog should end the run after hang_after")
	},
}, {
	// Count outcomes, not attempts: 20 % of attempts get a 429, retried up to 5 times. Every
	// round completes, so no request failed: healthy, with the retries as evidence.
	name: "429s that succeed on retry",
	sim: simCase{workload: "smoke", overrides: map[string]string{"agents": "10", "rounds": "5", "retry.max": "5", "retry.backoff": "1s"},
		faults: []string{"errors"}, faultParams: []string{"rate=0.2", "kind=429", "retry_after=1s"}, speedup: 20},
	kind:    results.Healthy,
	summary: `^50 rounds completed, 50 requests ok, p50 latency \d+\.\d s$`,
	evidence: []string{
		`^retries: \d+ \(\d+\.\d % of \d+ attempts sent; reasons: \d+ http_status 429\); \d+ requests succeeded on a retry, 0 failed in the end$`,
	},
	check: func(t *testing.T, r scenarioRun) {
		q := r.res.Requests
		assert.Positive(t, q.Retries)
		assert.Equal(t, q.Retries, q.Errors, "every failed attempt was retried: %+v", q)
		assert.Zero(t, q.Failed)
		assert.Equal(t, 50, r.res.Rounds.Completed)
	},
}, {
	// Requests queued at the server are not stalled streams: 16 smoke agents on a server of 2
	// decode slots. Queued requests wait more than stall_after (20 s) for their first token
	// while the server reports them queued; the duration (60 s) and grace (5 s) then cancel
	// those still waiting. Queueing, not a stall; and slow, as the note at kind says.
	name: "requests queued at a 2-slot server",
	sim: simCase{workload: "smoke", overrides: map[string]string{"agents": "16", "pacer.slots": "16", "duration": "60s",
		"request.max_tokens": "4096", "request.output_tokens": "2000"},
		speedup: 20, maxRunning: 2},
	// Queueing is no stall, but the requests the stop cut in the queue count toward the
	// latency (censored): most had waited longer than slow_after, so the run is slow.
	kind:    results.Slow,
	summary: `^requests complete but slowly: \d+ of the \d+ requests cut before their end had run ≥ 60 s \(longest \d+ s; censored, counted at their time so far\), while the \d+ that finished took \d+ s on average \(p50 \d+ s\); mean latency ≥ \d+ s counting them all, inherent to the load$`,
	check: func(t *testing.T, r scenarioRun) {
		assert.Positive(t, r.res.Requests.Cancelled, "some queued requests are cancelled by the stop")
		assert.Positive(t, r.res.Requests.Stalled, "some requests waited ≥ stall_after in the queue")
		assert.Equal(t, 2.0, r.res.Server.DecodeRunning.Max)
	},
}, {
	// Nothing ran is not healthy: with max_context_tokens 1100 the smallest first round fits
	// the workload's validation (1064 tokens of text and output), but not once the chat
	// template's per-message tokens are counted, so every agent stops before its first request,
	// and the run says so (exit 3, not 0).
	name:    "nothing ran: every request too large for the context",
	sim:     simCase{workload: "smoke", overrides: map[string]string{"context.max_context_tokens": "1100"}, speedup: 20},
	kind:    results.Errors,
	summary: `^nothing ran: no request was sent in \d+\.\d s; 8 of 8 planned rounds never started \(8 max_context_tokens\)$`,
	evidence: []string{
		`^requests: 0 sent, 0 ok, 0 failed, 0 cancelled; rounds: 0 of 8 planned completed, 0 failed, 8 never started$`,
		`max_context_tokens: the next request would exceed context.max_context_tokens$`,
	},
	check: func(t *testing.T, r scenarioRun) {
		assert.Equal(t, 8, r.res.Rounds.NotStarted)
		assert.Equal(t, map[string]int{"max_context_tokens": 8}, r.res.Rounds.NotStartedReasons)
	},
}, {
	// Rounds cut by the duration are counted and said: 40 agents behind 4 permits and a 20 s
	// duration start few of their 80 rounds. The verdict stays healthy — the duration is
	// the user's choice — but its summary says how many never started, and why.
	name:    "duration leaves most rounds unstarted",
	sim:     simCase{workload: "smoke", overrides: map[string]string{"agents": "40", "duration": "20s"}, speedup: 20},
	kind:    results.Healthy,
	summary: `^\d+ rounds completed, \d+ requests ok, p50 latency \d+\.\d s; \d+ of 80 planned rounds never started \(\d+ duration\)$`,
	check: func(t *testing.T, r scenarioRun) {
		rounds := r.res.Rounds
		assert.Greater(t, rounds.NotStarted, 40, "rounds %+v", rounds)
		assert.Equal(t, rounds.Planned, rounds.Completed+rounds.Failed+rounds.NotStarted, "rounds %+v", rounds)
	},
}}

// assertWedgeEndedEarly checks that the watchdog, not the 60 m duration, ended a wedged run,
// and only after hang_after (600 s) without progress: the wedge hits in round 2 or 3, before
// t ≈ 700 s, so the run ends by t ≈ 1300 s.
func assertWedgeEndedEarly(t *testing.T, r scenarioRun) {
	t.Helper()
	assert.True(t, r.watchdogEnded(), "no watchdog warning ended the run")
	assert.True(t, r.watchdogEndedAfterHang(), "the watchdog ended the run before hang_after without progress")
	assert.Less(t, r.res.SimSeconds, float64(ocbrowseDurationS)/2, "the wedge should end the run within hang_after of its start")
	assert.Positive(t, r.res.Rounds.Completed, "rounds before the wedge complete")
}

// TestDiagnosisScenarios runs each scenario of the diagnosis table and checks the verdict the
// run wrote to results.json: its kind, summary and evidence, and that diagnose.FromDir — what
// `agentsim diagnose DIR` prints — derives the very same verdict from the run's files.
func TestDiagnosisScenarios(t *testing.T) {
	race := raceDetector()
	for _, sc := range append(scenarios, honestScenarios...) {
		t.Run(sc.name, func(t *testing.T) {
			if sc.heavy && race {
				t.Skip("an ocbrowse-sized run takes 10–30 s under the race detector; run without -race")
			}
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				res, dir := runSim(t, t.Context(), sc.sim)
				evs, err := rundir.ReadEvents(dir)
				require.NoError(t, err)
				onDisk, err := results.Read(dir)
				require.NoError(t, err)
				fromFiles, derived, err := diagnose.FromDir(dir)
				require.NoError(t, err)
				assert.Equal(t, diagnose.AllWarnings(onDisk), diagnose.AllWarnings(derived), "diagnose.FromDir(%s) and results.json warn alike", sc.name)

				var out bytes.Buffer
				require.NoError(t, diagnose.Render(&out, onDisk.Verdict))
				t.Logf("%s: %.0f s simulated\n%s", sc.name, res.SimSeconds, out.String())

				assert.Equal(t, onDisk.Verdict, fromFiles, "diagnose.FromDir(%s) and results.json disagree", sc.name)
				assert.Equal(t, res.Verdict, onDisk.Verdict)
				v := onDisk.Verdict
				require.Equal(t, sc.kind, v.Kind, "verdict %s: %s\n%s", v.Kind, v.Summary, out.String())
				assert.Regexp(t, sc.summary, v.Summary)
				for _, pat := range sc.evidence {
					assert.True(t, anyMatch(pat, v.Evidence), "no evidence line matches %q in\n%s", pat, out.String())
				}
				assertEvidenceUnits(t, v)
				if sc.check != nil {
					sc.check(t, scenarioRun{res: res, evs: evs})
				}
			})
		})
	}
}

// anyMatch reports whether some line matches pattern.
func anyMatch(pattern string, lines []string) bool {
	re := regexp.MustCompile(pattern)
	for _, l := range lines {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// durationNumber finds a number that a duration phrase introduces ("for 612", "for ≥ 120",
// "for up to 293", "longest 5.1", "took 173", "t=682") or ends ("… ago"), with what follows.
var durationNumber = regexp.MustCompile(`(?:\bfor(?: up to| ≥)?|\blongest|\btook|\bt=) ?([0-9][0-9.–]*)(.{0,3})|([0-9][0-9.]*)( \S+) ago`)

// assertEvidenceUnits checks that every duration in the verdict carries its unit, seconds.
func assertEvidenceUnits(t *testing.T, v results.Verdict) {
	t.Helper()
	unit := regexp.MustCompile(`^ s(\W|$)`)
	for _, line := range append([]string{v.Summary}, v.Evidence...) {
		for _, m := range durationNumber.FindAllStringSubmatch(line, -1) {
			after := m[2] + m[4]
			assert.Regexp(t, unit, after, "no unit after %q in %q", m[0], line)
		}
	}
}

// raceDetector reports whether the test binary was built with -race.
func raceDetector() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
