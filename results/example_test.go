package results_test

import (
	"fmt"
	"os"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// Summarize describes a distribution of durations in simulated seconds; percentiles are
// nearest-rank on the exact observations.
func ExampleSummarize() {
	e2e := []float64{162.8, 229.1, 148.0, 174.4, 201.3, 155.9, 190.2, 168.7, 183.5, 176.0}
	s := results.Summarize(e2e)
	fmt.Printf("n=%d mean=%.1f s p50=%.1f s p90=%.1f s p99=%.1f s min=%.1f s max=%.1f s\n",
		s.N, s.Mean, s.P50, s.P90, s.P99, s.Min, s.Max)
	// Output:
	// n=10 mean=179.0 s p50=174.4 s p90=201.3 s p99=229.1 s min=148.0 s max=229.1 s
}

// A Builder counts what the events tell — every attempt, each with one terminal event — and
// fills the counting and statistical parts of Results.
func ExampleBuilder() {
	b := results.NewBuilder()
	for _, e := range []events.Event{
		{Kind: events.PacerAcquired, Agent: 0, Round: 1, PacerWaitS: 0},
		{Kind: events.RequestSent, Agent: 0, Round: 1, Request: "a0-r1-0"},
		{Kind: events.Error, Agent: 0, Round: 1, Request: "a0-r1-0", Class: "http_status", Status: 429},
		{Kind: events.Retry, Agent: 0, Round: 1, Request: "a0-r1-0", Attempt: 1, BackoffS: 5},
		{Kind: events.RequestSent, Agent: 0, Round: 1, Request: "a0-r1-1", Attempt: 1},
		{Kind: events.Done, Agent: 0, Round: 1, Request: "a0-r1-1", Attempt: 1,
			LatencyS: 40, TTFTS: 1.2, CompletionTokens: 1001, ReasoningTokens: 800, PromptTokens: 9000},
		{Kind: events.RoundDone, Agent: 0, Round: 1, Outcome: events.RoundOK},
		{Kind: events.RequestSent, Agent: 1, Round: 1, Request: "a1-r1-0"},
	} {
		b.Event(e)
	}
	var r results.Results
	b.Fill(&r, 50) // the run's simulated duration, seconds
	q := r.Requests
	fmt.Printf("requests: %d sent, %d ok, %d errors, %d retries, %d in flight\n", q.Sent, q.OK, q.Errors, q.Retries, q.InFlight)
	fmt.Printf("rounds completed: %d\n", r.Rounds.Completed)
	fmt.Printf("e2e mean %.1f s, TPOT %.4f s, output %.2f tok/s\n", r.Latency.E2E.Mean, r.Latency.TPOT.Mean, r.Tokens.OutputPerSecond)
	// Output:
	// requests: 3 sent, 1 ok, 1 errors, 1 retries, 1 in flight
	// rounds completed: 1
	// e2e mean 40.0 s, TPOT 0.0388 s, output 20.02 tok/s
}

// Write stamps the schema and writes results.json atomically; Read reads it back.
func ExampleWrite() {
	dir, err := os.MkdirTemp("", "agentsim-run-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	r := &results.Results{Command: "run", Workload: "smoke", Speedup: 20, SimSeconds: 41.2, WallSeconds: 2.1,
		Verdict: results.Verdict{Kind: results.Healthy, Summary: "8 rounds completed, 8 requests ok, p50 latency 3.9 s", Evidence: []string{}}}
	if err := results.Write(dir, r); err != nil {
		fmt.Println(err)
		return
	}
	back, err := results.Read(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back.Schema, back.Command, back.Workload, back.SimSeconds, "s simulated,", back.WallSeconds, "s wall")
	fmt.Println(string(back.Verdict.Kind)+":", back.Verdict.Summary)
	// Output:
	// agentsim.results/v1 run smoke 41.2 s simulated, 2.1 s wall
	// healthy: 8 rounds completed, 8 requests ok, p50 latency 3.9 s
}
