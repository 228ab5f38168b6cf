package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// Point is one test of a run: Concurrency requests sent at once and what they measured. Times
// are simulated.
type Point struct {
	// Concurrency is how many requests were sent at once.
	Concurrency int
	// Start is when the first request was sent (when the test began if none was).
	Start time.Time
	// Results is what the harness recorded of the test: counts, latency statistics, tokens,
	// gauges and verdict, as in its results.json.
	Results *results.Results
	// Calls holds every request's result, in agent order.
	Calls []agents.Result
	// Samples are the samples the harness took during the test; their TS counts from the
	// start of its harness run, a moment before Start.
	Samples []events.Sample

	chunks  [][]time.Time // per request, the arrival of every data frame
	offsetS float64       // simulated seconds from the bench run's start to the test's
	speedup float64       // the clock's; 0 reads as 1
	open    *OpenLoop     // the load of an open-loop test; nil: Concurrency at once
}

// WallS is the test's duration in simulated seconds: from sending the requests to the last
// byte of the last one to complete, or to the end of a failed one if that came later.
func (p *Point) WallS() float64 {
	end := p.Start
	for _, c := range p.Calls {
		last := c.End
		if c.OK() {
			last = c.Last
		}
		if last.After(end) {
			end = last
		}
	}
	return end.Sub(p.Start).Seconds()
}

// OK counts the requests that completed (their stream reached [DONE]).
func (p *Point) OK() int {
	n := 0
	for _, c := range p.Calls {
		if c.OK() {
			n++
		}
	}
	return n
}

// Failed counts the requests that did not complete.
func (p *Point) Failed() int { return len(p.Calls) - p.OK() }

// ResultLine is the incident's one-line result, in simulated seconds:
// "RESULT N=16 max_tokens=128 wall=5.4s ok=16/16 lat_min=3.9s lat_max=5.4s lat_mean=5.1s".
// The latencies are the harness's end-to-end statistics, over completed requests; "n/a" when
// none completed. Times under 0.1 s get milliseconds (resultSeconds). At a speedup other than
// 1 the line goes on with "speedup=20 wall_real=0.27s": its times are simulated, and the test
// took wall_real of real time. An open-loop test's N is the requests sent, and the line ends
// with its load: "rate=10/s arrivals=poisson".
func (p *Point) ResultLine(maxTokens int) string {
	lat := "lat_min=n/a lat_max=n/a lat_mean=n/a"
	if e := p.Results.Latency.E2E; e.N > 0 {
		lat = fmt.Sprintf("lat_min=%s lat_max=%s lat_mean=%s", resultSeconds(e.Min), resultSeconds(e.Max), resultSeconds(e.Mean))
	}
	line := fmt.Sprintf("RESULT N=%d max_tokens=%d wall=%s ok=%d/%d %s",
		p.Concurrency, maxTokens, resultSeconds(p.WallS()), p.OK(), len(p.Calls), lat)
	if p.speedup > 0 && p.speedup != 1 {
		line += fmt.Sprintf(" speedup=%g wall_real=%s", p.speedup, resultSeconds(p.WallS()/p.speedup))
	}
	if p.open != nil {
		line += fmt.Sprintf(" rate=%g/s arrivals=%s", p.open.Rate, p.open.Arrivals)
	}
	return line
}

// printLatencies prints the test's latency percentiles, in the rows a vllm bench serve or
// GuideLLM user reads first: TTFT, TPOT, ITL and end-to-end, mean, p50, p90 and p99 over the
// completed requests, in simulated time, and the request and output rates over the test.
func (p *Point) printLatencies(w io.Writer) {
	l := p.Results.Latency
	fmt.Fprintf(w, "  latency  %-5s %9s %9s %9s %9s   (simulated; over %d ok of %d)\n", "", "mean", "p50", "p90", "p99", p.OK(), len(p.Calls))
	for _, row := range []struct {
		name string
		s    results.Summary
	}{{"ttft", l.TTFT}, {"tpot", l.TPOT}, {"itl", l.ITL}, {"e2e", l.E2E}} {
		if row.s.N == 0 {
			fmt.Fprintf(w, "           %-5s %9s\n", row.name, "n/a")
			continue
		}
		fmt.Fprintf(w, "           %-5s %9s %9s %9s %9s\n", row.name, results.Seconds(row.s.Mean), results.Seconds(row.s.P50),
			results.Seconds(row.s.P90), results.Seconds(row.s.P99))
	}
	if s := p.WallS(); s > 0 {
		fmt.Fprintf(w, "  rates    %.2f requests/s ok, %.1f output tok/s, over %s simulated\n", float64(p.OK())/s, p.WholeTokPerS(), results.Seconds(s))
	}
}

// resultSeconds renders a RESULT line's time in the incident's form, one decimal and "s"
// ("5.4s"), with three decimals under 0.1 s, so that a fast server's 23 ms reads "0.023s", not
// "0.0s".
func resultSeconds(s float64) string {
	if s > 0 && s < 0.1 {
		return fmt.Sprintf("%.3fs", s)
	}
	return fmt.Sprintf("%.1fs", s)
}

// PromptTokens returns the mean prompt length the server counted (usage.prompt_tokens) over
// the completed requests, and false when none completed with usage.
func (p *Point) PromptTokens() (float64, bool) {
	r := p.Results
	if r.Requests.OK == 0 || r.Tokens.Prompt == 0 {
		return 0, false
	}
	return float64(r.Tokens.Prompt) / float64(r.Requests.OK), true
}

// Failures describes the failed requests by class and status, most frequent first, e.g.
// "8 × http_status 503"; "" when none failed.
func (p *Point) Failures() string {
	counts := map[string]int{}
	for _, c := range p.Calls {
		if c.OK() {
			continue
		}
		key := string(c.Class)
		if c.Status != 0 && c.Status/100 != 2 {
			key += fmt.Sprintf(" %d", c.Status)
		}
		counts[key]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d × %s", counts[k], k)
	}
	return strings.Join(parts, ", ")
}

// printDetails prints, under the RESULT line, the prompt length the server counted, the
// output rates, the requests that returned fewer than maxTokens and the failures.
func (p *Point) printDetails(w io.Writer, promptTokens, maxTokens int) {
	counted := "no usage reported"
	if n, ok := p.PromptTokens(); ok {
		counted = fmt.Sprintf("%.0f counted by the server", n)
	}
	fmt.Fprintf(w, "  prompt   %d tokens requested per request, %s\n", promptTokens, counted)
	d := p.Decode()
	fmt.Fprintf(w, "  output   %.1f tok/s aggregate while ≥ %d of %d streams decoded (t=%.1f–%.1fs); %.1f tok/s per request; %.1f tok/s over the whole test\n",
		d.TokPerS, d.Threshold, d.Peak, d.FromS, d.ToS, p.PerRequestTokPerS(), p.WholeTokPerS())
	if s := p.shortLine(maxTokens); s != "" {
		fmt.Fprintf(w, "  short    %s\n", s)
	}
	if f := p.Failures(); f != "" {
		fmt.Fprintf(w, "  failed   %d/%d: %s; first: %s\n", p.Failed(), len(p.Calls), f, p.firstError())
	}
}

// firstError is the message of the first failed request, shortened to one line.
func (p *Point) firstError() string {
	for _, c := range p.Calls {
		if c.Err != nil {
			msg := strings.ReplaceAll(c.Err.Error(), "\n", " ")
			if len(msg) > 160 {
				msg = msg[:160] + "…"
			}
			return msg
		}
	}
	return ""
}
