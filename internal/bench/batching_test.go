package bench

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
)

// sweepPoint is a test of n requests at once whose streams are given, with the server's
// decode_running maximum (-1: the server has no such gauge).
func sweepPoint(n int, gaugeMax float64, streams ...func() (agents.Result, []time.Time)) *Point {
	p := point(streams...)
	p.Concurrency = n
	p.Results = &results.Results{}
	if gaugeMax >= 0 {
		p.Results.Server.DecodeRunning = results.MeanMax{Mean: gaugeMax / 2, Max: gaugeMax, N: 10}
	}
	return p
}

// TestBatchingConclusion checks the sweep's conclusion on hand-made curves: it is drawn from
// the streams decoding at once, the decode gauge and the per-request rates, not from the
// aggregate rate alone.
func TestBatchingConclusion(t *testing.T) {
	alone := sweepPoint(1, 1, fake(100, 10, 128, 1)) // 100 tok/s
	many := func(n, stepMS int) []func() (agents.Result, []time.Time) {
		s := make([]func() (agents.Result, []time.Time), n)
		for i := range s {
			s[i] = fake(100, stepMS, 128, 1)
		}
		return s
	}
	queued := make([]func() (agents.Result, []time.Time), 4) // one after another, 1.28 s each
	for i := range queued {
		queued[i] = fake(100+i*1280, 10, 128, 1)
	}
	for _, c := range []struct {
		name string
		hi   *Point
		want string
	}{{
		// llama-server on CPU: 16 decode at once (its own gauge says so), each 16 times
		// slower; the aggregate stays at 100 tok/s.
		name: "compute-bound", hi: sweepPoint(16, 16, many(16, 160)...),
		want: "flat and compute-bound: 16 requests decoded at once at N=16 (16 streams, server decode_running max 16) and each request's rate fell ×16.0, so the aggregate rate is the server's limit",
	}, {
		// One request decodes at a time; the others wait their turn.
		name: "serialised", hi: sweepPoint(4, -1, queued...),
		want: "flat: the server is not batching concurrent requests (at most 1 decoding at once at N=4)",
	}, {
		// 16 at once at nearly the rate of one: batching pays.
		name: "batching", hi: sweepPoint(16, 16, many(16, 12)...),
		want: "decode batches concurrent requests",
	}} {
		t.Run(c.name, func(t *testing.T) {
			got := batching(alone, c.hi)
			assert.Equal(t, c.want, got, "batching(N=1, N=%d)", c.hi.Concurrency)
		})
	}
}

// TestComputeBoundServerIsNotCalledSerial runs a sweep against the simulator with a CPU-like
// engine — each running request adds 40 ms to every decode step, so 16 requests decode at
// once at the aggregate rate of one — and checks the conclusion names a compute-bound server
// not one that does not batch, while its "decoding" column reads 16.
func TestComputeBoundServerIsNotCalledSerial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := *simserver.DSV4PD()
		p.Name, p.DecodeBase, p.DecodePerSeq, p.DecodePerKVTokenNs = "cpu", time.Millisecond, 40*time.Millisecond, 0
		rep, out := simRunProfile(t, 20, &p, nil, Options{Concurrency: []int{1, 16}, Sweep: true, MaxTokens: 32})
		require.Len(t, rep.Points, 2)
		assert.Equal(t, 16, rep.Points[1].Decode().Peak, "16 decode at once:\n%s", out)
		assert.NotContains(t, out, "not batching", out)
		assert.Contains(t, out, "flat and compute-bound: ", out)
		assert.Regexp(t, `flat and compute-bound: 16 requests decoded at once at N=16 \(16 streams, server decode_running max 16\) and each request's rate fell ×1[0-9]\.\d`, out)
	})
}

// TestMetricsLineAtTheEnd: a gauge found only after the first sample (vLLM exports its
// generation counter once a request has ended) is named again at the end of the test, so the
// first line's "not found" is not the last word; an unchanged line is not repeated.
func TestMetricsLineAtTheEnd(t *testing.T) {
	var out strings.Builder
	l := &live{out: &out, sweep: true}
	first := "server metrics: decode_running ← vllm:num_requests_running; not found: gen_tok_s"
	last := "server metrics: decode_running ← vllm:num_requests_running, gen_tok_s ← rate(vllm:generation_tokens_total)"
	l.sample(events.Sample{}, first)
	l.sample(events.Sample{}, last)
	l.end(last)
	l.end(last)
	assert.Equal(t, first+"\nat the end: "+last+"\n", out.String())
}

// TestCutSweepConcludesNothing is a sweep interrupted during its second test of three: the
// cut test is shown as cut and no conclusion is drawn from it, and the test never started is
// neither in the curve, nor in results.json, nor among the files.
func TestCutSweepConcludesNothing(t *testing.T) {
	queued := make([]func() (agents.Result, []time.Time), 4)
	for i := range queued {
		queued[i] = fake(100+i*1280, 10, 128, 1)
	}
	cut := sweepPoint(4, -1, queued...) // it looks serialised: a conclusion from it would be false
	cut.Cut = true
	r := &Report{Sweep: true, MaxTokens: 128, Interrupted: true, Points: []*Point{sweepPoint(1, 1, fake(100, 10, 128, 1)), cut}}
	var b strings.Builder
	r.PrintCurve(&b)
	assert.Contains(t, b.String(), "(cut short by the interruption)")
	assert.NotContains(t, b.String(), "scaling:", "no conclusion from a cut test")
	assert.Equal(t, "{results.json, n1/, n4/}", r.Files(), "only the tests that ran")
	sweep := r.Results().Bench.Sweep
	require.Len(t, sweep, 2)
	assert.True(t, sweep[1].Cut)
	assert.False(t, sweep[0].Cut)
}
