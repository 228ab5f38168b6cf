package bench

import (
	"fmt"
	"io"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// Report is what a Run measured: one Point per concurrency, in the order run.
type Report struct {
	// Server is the server tested; Speedup the clock's.
	Server  results.Server
	Speedup float64
	// Model is the model name sent; MaxTokens and PromptTokens the request shape, in tokens.
	Model        string
	MaxTokens    int
	PromptTokens int
	// Sweep is set when the run was a sweep; Open is the load of an open-loop test.
	Sweep bool
	Open  *OpenLoop
	// Points holds one test per concurrency run (fewer than asked when interrupted).
	Points []*Point
	// SimSeconds is the simulated time the tests took, each from sending its requests to its
	// last byte (the RESULT lines' wall, summed); WallSeconds is the whole run's wall time.
	SimSeconds  float64
	WallSeconds float64
	// Interrupted is set when the run was interrupted.
	Interrupted bool
}

// AllOK reports whether every request of every test completed with the MaxTokens output
// tokens asked and the run was not interrupted.
func (r *Report) AllOK() bool {
	for _, p := range r.Points {
		if n, _ := p.Short(r.MaxTokens); p.Failed() > 0 || n > 0 {
			return false
		}
	}
	return !r.Interrupted && len(r.Points) > 0
}

// Results is the report as results.json (command "bench"): the harness's results of the last
// test run — the only one outside a sweep — with the run's times and the bench part. A sweep
// lists every test in Bench.Sweep, and its verdict is that of the first test whose verdict is
// not healthy, if any. Bench.Samples holds every sample of the run, TS counting from its start;
// the evidence ends with one line per test.
func (r *Report) Results() *results.Results {
	res := &results.Results{Server: r.Server, Verdict: results.Verdict{Kind: results.Errors, Summary: "no request was sent"}}
	var evidence []string
	if len(r.Points) > 0 {
		last := r.Points[len(r.Points)-1]
		copied := *last.Results
		res = &copied
		last.fill(res, r.MaxTokens)
		for _, p := range r.Points {
			if p.Results.Verdict.Kind != results.Healthy {
				res.Verdict = p.Results.Verdict
				break
			}
		}
	}
	res.Command, res.Speedup, res.Interrupted = "bench", r.Speedup, r.Interrupted
	res.WallSeconds, res.SimSeconds = r.WallSeconds, r.SimSeconds
	if res.Bench == nil {
		res.Bench = &results.Bench{}
	}
	res.Bench.MaxTokens, res.Bench.PromptTokens, res.Bench.Samples = r.MaxTokens, r.PromptTokens, []events.Sample{}
	if r.Open != nil {
		res.Bench.Rate, res.Bench.Arrivals = r.Open.Rate, string(r.Open.Arrivals)
	}
	for _, p := range r.Points {
		for _, s := range p.Samples {
			s.TS += p.offsetS
			res.Bench.Samples = append(res.Bench.Samples, s)
		}
		if r.Sweep {
			res.Bench.Sweep = append(res.Bench.Sweep, p.sweepPoint())
		}
		evidence = append(evidence, p.evidence(r.MaxTokens))
	}
	res.Verdict.Evidence = append(append([]string{}, res.Verdict.Evidence...), evidence...)
	return res
}

// fill writes the test's bench figures into r, and its output rate over the test's wall, the
// time results.json reports as sim_seconds.
func (p *Point) fill(r *results.Results, maxTokens int) {
	r.Tokens.OutputPerSecond = p.WholeTokPerS()
	short, _ := p.Short(maxTokens)
	r.Bench = &results.Bench{Concurrency: p.Concurrency, OK: p.OK(), Failed: p.Failed(), Short: short,
		OutputTokPerS: p.Decode().TokPerS, PerRequestTokPerS: p.PerRequestTokPerS()}
}

// evidence describes one test in one line, with units.
func (p *Point) evidence(maxTokens int) string {
	d := p.Decode()
	line := fmt.Sprintf("N=%d: %d/%d ok in %.1f s; up to %d streams decoding at once, %.1f tok/s aggregate while ≥ %d did",
		p.Concurrency, p.OK(), len(p.Calls), p.WallS(), d.Peak, d.TokPerS, d.Threshold)
	if f := p.Failures(); f != "" {
		line += "; failed: " + f
	}
	if n, fewest := p.Short(maxTokens); n > 0 {
		line += fmt.Sprintf("; %d returned fewer than %d output tokens (fewest %d)", n, maxTokens, fewest)
	}
	if g := p.Results.Server.DecodeRunning; g.N > 0 {
		line += fmt.Sprintf("; server decode_running max %.0f", g.Max)
	}
	return line
}

// sweepPoint is the test as one point of the throughput curve.
func (p *Point) sweepPoint() results.SweepPoint {
	return results.SweepPoint{Concurrency: p.Concurrency, WallS: p.WallS(), OK: p.OK(),
		OutputTokPerS: p.Decode().TokPerS, PerRequestTokPerS: p.PerRequestTokPerS(),
		LatMeanS: p.Results.Latency.E2E.Mean}
}

// PrintCurve prints the throughput curve of a sweep: one row per concurrency and a line on
// whether the aggregate rate grows with it.
func (r *Report) PrintCurve(w io.Writer) {
	fmt.Fprintf(w, "throughput curve (%d-token outputs; simulated seconds; aggregate = output tok/s while ≥ 90%% of the peak streams decoded at once):\n", r.MaxTokens)
	fmt.Fprintf(w, "  %6s %9s %7s %9s %9s %16s %18s\n", "N", "ok", "wall", "lat_mean", "decoding", "aggregate tok/s", "per-request tok/s")
	for _, p := range r.Points {
		sp := p.sweepPoint()
		fmt.Fprintf(w, "  %6d %9s %6.1fs %8.1fs %9d %16.1f %18.1f\n", p.Concurrency, fmt.Sprintf("%d/%d", p.OK(), len(p.Calls)),
			sp.WallS, sp.LatMeanS, p.Decode().Peak, sp.OutputTokPerS, sp.PerRequestTokPerS)
	}
	if line := r.scaling(); line != "" {
		fmt.Fprintln(w, line)
	}
}

// scaling compares the lowest and highest concurrency of a sweep in one line, with what it
// says of the server's batching (see batching).
func (r *Report) scaling() string {
	var lo, hi *Point
	for _, p := range r.Points {
		if lo == nil || p.Concurrency < lo.Concurrency {
			lo = p
		}
		if hi == nil || p.Concurrency > hi.Concurrency {
			hi = p
		}
	}
	if lo == nil || lo == hi || lo.Decode().TokPerS <= 0 {
		return ""
	}
	a, b := lo.Decode().TokPerS, hi.Decode().TokPerS
	line := fmt.Sprintf("scaling: aggregate %.1f → %.1f tok/s (×%.1f) from N=%d to N=%d; per request %.1f → %.1f tok/s",
		a, b, b/a, lo.Concurrency, hi.Concurrency, lo.PerRequestTokPerS(), hi.PerRequestTokPerS())
	if c := batching(lo, hi); c != "" {
		line += " — " + c
	}
	return line
}

// batching concludes whether the server batches concurrent requests, from the highest
// concurrency's decode gauge and streams decoding at once and from the per-request rates, not
// from the aggregate rate alone: an aggregate that stays flat while many requests decode at
// once, each slower in proportion, is a compute-bound server that batches (llama-server on
// CPU), not one that serialises them. "" when the sweep spans less than a doubling.
func batching(lo, hi *Point) string {
	if hi.Concurrency < 2*lo.Concurrency {
		return ""
	}
	a, b := lo.Decode().TokPerS, hi.Decode().TokPerS
	if b >= 1.5*a {
		return "decode batches concurrent requests"
	}
	at := hi.Decode().Peak
	gauge := ""
	if g := hi.Results.Server.DecodeRunning; g.N > 0 {
		at = max(at, int(g.Max))
		gauge = fmt.Sprintf(", server decode_running max %.0f", g.Max)
	}
	if at < 2*max(1, lo.Decode().Peak) {
		return fmt.Sprintf("flat: the server is not batching concurrent requests (at most %d decoding at once at N=%d%s)", at, hi.Concurrency, gauge)
	}
	pa, pb := lo.PerRequestTokPerS(), hi.PerRequestTokPerS()
	fell := ""
	if pb > 0 {
		fell = fmt.Sprintf(" and each request's rate fell ×%.1f", pa/pb)
	}
	return fmt.Sprintf("flat, yet %d requests decoded at once at N=%d (%d streams%s)%s: the server batches but is compute-bound — its aggregate rate is its limit",
		at, hi.Concurrency, hi.Decode().Peak, gauge, fell)
}
