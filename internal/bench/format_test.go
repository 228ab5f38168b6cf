package bench

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/results"
)

// TestSampleLine checks the sample line's shape for the gauges a server may have.
func TestSampleLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		tS   float64
		s    events.Sample
		want string
	}{
		// The incident's two gauges, exactly as it printed them.
		{"incident", 2.3, events.Sample{Server: map[string]float64{"decode_running": 16, "prefill_inflight": 16}},
			"t= 2.3s decode_running=16.0 prefill_inflight=16.0"},
		// Queued and KV usage follow when the server has them; gen_tok_s is not shown.
		{"all gauges", 12.25, events.Sample{Server: map[string]float64{"decode_running": 15, "prefill_inflight": 0, "queued": 3, "kv_usage": 0.0125, "gen_tok_s": 500}},
			"t=12.2s decode_running=15.0 prefill_inflight=0.0 queued=3.0 kv_usage=0.013"},
		// A vLLM-like server without prefill_inflight.
		{"no prefill gauge", 0.75, events.Sample{Server: map[string]float64{"decode_running": 4, "queued": 12}},
			"t= 0.8s decode_running=4.0 queued=12.0"},
		// No server gauges: the client's own view.
		{"no metrics", 1.5, events.Sample{InFlight: 16, ChunksIn: 412}, "t= 1.5s in_flight=16 chunks=412"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, SampleLine(tc.tS, tc.s), "SampleLine(%v, %+v)", tc.tS, tc.s)
		})
	}
}

// TestResultLine checks the RESULT line with and without completed requests.
func TestResultLine(t *testing.T) {
	ok := func(latMS int) agents.Result {
		return agents.Result{Sent: t0, Last: at(latMS), End: at(latMS)}
	}
	failed := agents.Result{Sent: t0, End: at(100), Err: errors.New("503"), Class: events.ClassHTTPStatus, Status: 503}
	for _, tc := range []struct {
		name  string
		calls []agents.Result
		want  string
	}{
		// The incident's figures.
		{"incident", []agents.Result{ok(3900), ok(5400), ok(5100), ok(5100), ok(5400), ok(5700)},
			"RESULT N=6 max_tokens=128 wall=5.7s ok=6/6 lat_min=3.9s lat_max=5.7s lat_mean=5.1s"},
		// Failed requests count in N and wall, not in the latencies.
		{"some failed", []agents.Result{ok(2000), failed},
			"RESULT N=2 max_tokens=128 wall=2.0s ok=1/2 lat_min=2.0s lat_max=2.0s lat_mean=2.0s"},
		// A fast server: milliseconds, not 0.0s.
		{"fast", []agents.Result{ok(23), ok(31)},
			"RESULT N=2 max_tokens=128 wall=0.031s ok=2/2 lat_min=0.023s lat_max=0.031s lat_mean=0.027s"},
		// None completed: no latency to show.
		{"all failed", []agents.Result{failed, failed},
			"RESULT N=2 max_tokens=128 wall=0.1s ok=0/2 lat_min=n/a lat_max=n/a lat_mean=n/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The latencies come from the harness's results, as its builder computes them.
			var e2e []float64
			for _, c := range tc.calls {
				if c.OK() {
					e2e = append(e2e, c.Latency().Seconds())
				}
			}
			res := &results.Results{Latency: results.Latency{E2E: results.Summarize(e2e)}}
			p := &Point{Concurrency: len(tc.calls), Start: t0, Calls: tc.calls, Results: res}
			assert.Equal(t, tc.want, p.ResultLine(128))
		})
	}
}

// TestFailures checks the failure breakdown: most frequent first.
func TestFailures(t *testing.T) {
	e503 := agents.Result{Err: errors.New("x"), Class: events.ClassHTTPStatus, Status: 503}
	reset := agents.Result{Err: errors.New("x"), Class: events.ClassReset}
	p := &Point{Calls: []agents.Result{{}, reset, e503, e503}}
	assert.Equal(t, "2 × http_status 503, 1 × reset", p.Failures())
	assert.Equal(t, 3, p.Failed())
}

// TestValidate checks that every bad option is reported at once, with its value.
func TestValidate(t *testing.T) {
	o := Options{Concurrency: []int{16, 0}, MaxTokens: -1, PromptTokens: 0, SampleInterval: 0, Timeout: -time.Second}
	err := o.Validate()
	for _, want := range []string{"concurrency 0 is not allowed", "max tokens -1", "prompt tokens 0", "sample interval 0s",
		"timeout -1s", "clock: none given", "server URL: none given", "run directory: none given"} {
		assert.ErrorContains(t, err, want)
	}
	o = Options{Concurrency: []int{1}, MaxTokens: 1, PromptTokens: 1, SampleInterval: time.Second,
		Clock: clock.Real(), Target: harness.Target{URL: "http://x"}, Dir: "run"}
	assert.NoError(t, o.Validate())
}

// TestConclusion checks compare's conclusion line for each combination of outcomes.
func TestConclusion(t *testing.T) {
	syn := func(kind results.VerdictKind, ok int) *results.Results {
		return &results.Results{SimSeconds: 5.4, Requests: results.Requests{Sent: 16, OK: ok}, Verdict: results.Verdict{Kind: kind}}
	}
	ag := func(kind results.VerdictKind) *results.Results {
		r := &results.Results{Rounds: results.Rounds{Planned: 240, Completed: 62}, Verdict: results.Verdict{Kind: kind, Summary: "8 of 92 requests failed"}}
		r.Latency.E2E.P50 = 163.4
		return r
	}
	refused := func(r *results.Results) *results.Results {
		r.Failures = []results.Failure{{Class: "http_status", Status: 404, Count: 16, FirstMessage: "The model `deepseek-v4-flash` does not exist."}}
		return r
	}
	for _, tc := range []struct {
		name    string
		syn, ag *results.Results
		rounds  RoundSpan
		want    string
	}{
		// The incident: the benchmark passes, the agents wedge in one round.
		{"wedge", syn("healthy", 16), ag("deadlock"), RoundSpan{2, 2},
			"synthetic healthy (16/16 in 5.4 s); agentic stopped making progress in round 2 (deadlock) — the fault shows only under long, growing contexts"},
		// Agents stuck in different rounds.
		{"wedge across rounds", syn("healthy", 16), ag("stalled-streams"), RoundSpan{2, 4},
			"synthetic healthy (16/16 in 5.4 s); agentic stopped making progress in round 2 (stalled-streams; agents stuck in rounds 2–4) — the fault shows only under long, growing contexts"},
		// Both fine.
		{"both fine", syn("healthy", 16), ag("slow"), RoundSpan{},
			"synthetic healthy (16/16 in 5.4 s); agentic slow but progressing (62/240 rounds, e2e p50 163 s) — the server handles both"},
		// Errors only under the agentic load.
		{"agentic errors", syn("healthy", 16), ag("errors"), RoundSpan{3, 3},
			"synthetic healthy (16/16 in 5.4 s); agentic errors: 8 of 92 requests failed — the short synthetic benchmark misses what the agentic workload hits"},
		// The benchmark itself fails.
		{"synthetic fails", syn("errors", 8), ag("errors"), RoundSpan{},
			"synthetic failed (8/16 ok in 5.4 s); agentic errors: 8 of 92 requests failed — the server fails even short synthetic requests: look at those first"},
		// Both parts refused alike — a model the server does not serve: no blame on short
		// requests, and the server's words quoted.
		{"both refused", refused(syn("errors", 0)), refused(ag("errors")), RoundSpan{},
			"synthetic failed (0/16 ok in 5.4 s; 16 http_status 404: \"The model `deepseek-v4-flash` does not exist.\"); agentic errors: 8 of 92 requests failed — both parts fail alike: the server refuses the requests themselves, whatever their length or number"},
		// A slow synthetic part still completed: the agentic part is judged on its own.
		{"synthetic slow", syn("slow", 16), ag("deadlock"), RoundSpan{2, 2},
			"synthetic slow but complete (16/16 in 5.4 s); agentic stopped making progress in round 2 (deadlock) — the fault shows only under long, growing contexts"},
		// The agentic part never ran.
		{"no agentic", syn("healthy", 16), nil, RoundSpan{}, "synthetic healthy (16/16 in 5.4 s); agentic part not run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Conclusion(tc.syn, tc.ag, tc.rounds))
		})
	}
}
