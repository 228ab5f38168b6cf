package harness

import (
	"context"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/workloads"
)

// BenchmarkStreamMemory runs 2,000 smoke agents × 1 round × 256 tokens, every one streaming
// at once, against the embedded simulator served in-process as commands serve it (the ideal
// profile, speedup 2), and reports what an open stream costs at the sample with the most
// requests in flight: goroutine stack bytes, heap bytes in use (garbage not yet collected
// included) and heap bytes the last collection found live, per request in flight, the two
// sides (agent and simulator) together. docs/speed.md gives the figures at 10,000 agents.
func BenchmarkStreamMemory(b *testing.B) {
	const agents = 2000
	over := []workloads.Override{
		{Key: "agents", Value: "2000"}, {Key: "rounds", Value: "1"}, {Key: "pacer.slots", Value: "2000"},
		{Key: "request.output_tokens", Value: "256"}, {Key: "request.max_tokens", Value: "256"},
		{Key: "request.force_output_length", Value: "true"}, {Key: "request.reasoning_effort", Value: "none"},
	}
	w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke", Overrides: over})
	if err != nil {
		b.Fatal(err)
	}
	prof, err := simserver.LoadProfile("ideal")
	if err != nil {
		b.Fatal(err)
	}
	w.Model = prof.Model
	var peak struct {
		inFlight            int
		stack, heapIn, live uint64
	}
	// The heap the last collection found live: HeapInuse counts garbage not yet collected too.
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for b.Loop() {
		clk, err := clock.New(2)
		if err != nil {
			b.Fatal(err)
		}
		sim := simtest.NewLocalServer(b, simserver.Options{Clock: clk, Profile: prof})
		peak.inFlight = 0
		sampled := func(s events.Sample, _ string) {
			if s.InFlight <= peak.inFlight {
				return
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			metrics.Read(live)
			peak.inFlight, peak.stack, peak.heapIn = s.InFlight, m.StackInuse, m.HeapInuse
			peak.live = live[0].Value.Uint64()
		}
		_, err = Run(context.Background(), Options{Command: "run", Workload: w, Clock: clk,
			Target: Target{URL: sim.URL, Kind: results.Embedded, Profile: prof.Name},
			Dir:    filepath.Join(b.TempDir(), "run"), HTTPClient: sim.Client(), Sampled: sampled})
		if err != nil {
			b.Fatal(err)
		}
		sim.Close()
	}
	if peak.inFlight < agents/2 {
		b.Fatalf("at most %d of %d requests were in flight at once: the figures would not describe open streams", peak.inFlight, agents)
	}
	b.ReportMetric(float64(peak.inFlight), "streams")
	b.ReportMetric(float64(peak.stack)/float64(peak.inFlight), "stack-B/stream")
	b.ReportMetric(float64(peak.heapIn)/float64(peak.inFlight), "heap-B/stream")
	b.ReportMetric(float64(peak.live)/float64(peak.inFlight), "live-B/stream")
}
