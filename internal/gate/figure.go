package gate

import (
	"fmt"
	"math"
	"strings"

	"github.com/agentsim/agentsim/results"
)

// Unit is what a figure measures in; it decides how absolute limits are written and how
// values print.
type Unit int

// The units of figures.
const (
	// Seconds: simulated seconds; limits are durations with their unit ("30s", "250ms").
	Seconds Unit = iota
	// Ratio: a fraction from 0 to 1; limits are numbers (0.01) or percentages ("1%").
	Ratio
	// Count: a number of requests or rounds; limits are numbers.
	Count
	// TokensPerSecond: tokens per simulated second; limits are numbers, "tok/s" optional.
	TokensPerSecond
	// Tokens: a number of tokens; limits are numbers, "tokens" optional.
	Tokens
)

// Format prints v in the unit: "1.234 s", "0.5 %", "240", "1520.3 tok/s", "61440 tokens".
func (u Unit) Format(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	switch u {
	case Seconds:
		return formatSeconds(v)
	case Ratio:
		return trimFloat(v*100, 2) + " %"
	case TokensPerSecond:
		return trimFloat(v, 1) + " tok/s"
	case Tokens:
		return trimFloat(v, 0) + " tokens"
	}
	return trimFloat(v, 2)
}

// formatSeconds prints a duration in seconds with about four significant digits.
func formatSeconds(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0 s"
	case a < 0.001:
		return trimFloat(v*1e6, 1) + " µs"
	case a < 1:
		return trimFloat(v*1000, 1) + " ms"
	case a < 100:
		return trimFloat(v, 3) + " s"
	}
	return trimFloat(v, 1) + " s"
}

// trimFloat prints v with at most digits decimals, trailing zeros removed.
func trimFloat(v float64, digits int) string {
	s := fmt.Sprintf("%.*f", digits, v)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Figure is one number of a run that a threshold can constrain and a diff compares: a
// statistic of a latency distribution ("e2e.p90"), a count ("requests.failed"), a ratio
// ("requests.failed_ratio") or a rate ("tokens.output_per_second"). docs/gate.md lists them.
type Figure struct {
	// Name is the figure's key under thresholds:, e.g. "ttft.p99".
	Name string
	// Unit is what Value measures in.
	Unit Unit
	// Doc says what the figure is, in a few words.
	Doc string
	// value reads the figure from a run's results.
	value func(*results.Results) float64
	// series, when set, picks the per-request observations the figure is a statistic of, so
	// that a comparison can resample them; stat computes the figure from them.
	series func(*results.Observations) []float64
	stat   stat
	// seriesName names the series, so that a comparison resamples each one once.
	seriesName string
}

// Value is the figure's value in r.
func (f Figure) Value(r *results.Results) float64 { return f.value(r) }

// Resampled reports whether the figure is a statistic of per-request observations whose
// change between two runs gets a bootstrap confidence interval: latency quantiles and means,
// and the output rate (its requests' tokens resampled, the run's duration held); not maxima,
// whose bootstrap is degenerate, nor counts.
func (f Figure) Resampled() bool { return f.series != nil && f.stat.kind != statMax }

// latencyKinds are the latency distributions of results.json, by figure prefix.
var latencyKinds = []struct {
	name, doc string
	summary   func(*results.Latency) results.Summary
	series    func(*results.Observations) []float64
}{
	{"ttft", "time to first token (reasoning or content), successful requests", func(l *results.Latency) results.Summary { return l.TTFT }, func(o *results.Observations) []float64 { return o.TTFT }},
	{"ttft_content", "time to first content token", func(l *results.Latency) results.Summary { return l.TTFTContent }, func(o *results.Observations) []float64 { return o.TTFTContent }},
	{"itl", "per-request mean gap between chunks", func(l *results.Latency) results.Summary { return l.ITL }, func(o *results.Observations) []float64 { return o.ITL }},
	{"tpot", "per-request time per output token after the first", func(l *results.Latency) results.Summary { return l.TPOT }, func(o *results.Observations) []float64 { return o.TPOT }},
	{"e2e", "request latency, send to last byte", func(l *results.Latency) results.Summary { return l.E2E }, func(o *results.Observations) []float64 { return o.E2E }},
	{"pacer_wait", "time an agent waited for the pacer, every acquisition", func(l *results.Latency) results.Summary { return l.PacerWait }, func(o *results.Observations) []float64 { return o.PacerWait }},
}

// latencyStats are the statistics of each latency distribution, by figure suffix.
var latencyStats = []struct {
	name  string
	stat  stat
	field func(results.Summary) float64
}{
	{"p50", stat{statQuantile, 0.50}, func(s results.Summary) float64 { return s.P50 }},
	{"p90", stat{statQuantile, 0.90}, func(s results.Summary) float64 { return s.P90 }},
	{"p99", stat{statQuantile, 0.99}, func(s results.Summary) float64 { return s.P99 }},
	{"mean", stat{statMean, 0}, func(s results.Summary) float64 { return s.Mean }},
	{"max", stat{statMax, 0}, func(s results.Summary) float64 { return s.Max }},
}

// counters are the figures that are not latency statistics.
var counters = []Figure{
	{Name: "requests.sent", Unit: Count, Doc: "attempts sent", value: func(r *results.Results) float64 { return float64(r.Requests.Sent) }},
	{Name: "requests.ok", Unit: Count, Doc: "requests that succeeded", value: func(r *results.Results) float64 { return float64(r.Requests.OK) }},
	{Name: "requests.failed", Unit: Count, Doc: "requests whose last attempt failed", value: func(r *results.Results) float64 { return float64(r.Requests.Failed) }},
	{Name: "requests.failed_ratio", Unit: Ratio, Doc: "failed ÷ (ok + failed); 0 when none ended", value: failedRatio},
	{Name: "requests.errors", Unit: Count, Doc: "attempts the server or transport failed", value: func(r *results.Results) float64 { return float64(r.Requests.Errors) }},
	{Name: "requests.timeouts", Unit: Count, Doc: "attempts a harness timeout ended", value: func(r *results.Results) float64 { return float64(r.Requests.Timeouts) }},
	{Name: "requests.cancelled", Unit: Count, Doc: "attempts the run's stop cancelled", value: func(r *results.Results) float64 { return float64(r.Requests.Cancelled) }},
	{Name: "requests.retries", Unit: Count, Doc: "retries", value: func(r *results.Results) float64 { return float64(r.Requests.Retries) }},
	{Name: "requests.stalled", Unit: Count, Doc: "requests silent for at least watchdog.stall_after", value: func(r *results.Results) float64 { return float64(r.Requests.Stalled) }},
	{Name: "rounds.planned", Unit: Count, Doc: "agents × rounds", value: func(r *results.Results) float64 { return float64(r.Rounds.Planned) }},
	{Name: "rounds.completed", Unit: Count, Doc: "rounds that completed", value: func(r *results.Results) float64 { return float64(r.Rounds.Completed) }},
	{Name: "rounds.failed", Unit: Count, Doc: "rounds that failed", value: func(r *results.Results) float64 { return float64(r.Rounds.Failed) }},
	{Name: "rounds.not_started", Unit: Count, Doc: "planned rounds of finished agents that never sent a request", value: func(r *results.Results) float64 { return float64(r.Rounds.NotStarted) }},
	{Name: "rounds.completed_ratio", Unit: Ratio, Doc: "completed ÷ planned; 0 when none planned", value: completedRatio},
	{Name: "tokens.output_per_second", Unit: TokensPerSecond, Doc: "output tokens streamed ÷ simulated seconds", value: func(r *results.Results) float64 { return r.Tokens.OutputPerSecond },
		series: func(o *results.Observations) []float64 { return o.Output }, stat: stat{kind: statSum}, seriesName: "output"},
	{Name: "tokens.prompt", Unit: Tokens, Doc: "prompt tokens of successful requests", value: func(r *results.Results) float64 { return float64(r.Tokens.Prompt) }},
	{Name: "tokens.cached", Unit: Tokens, Doc: "cached prompt tokens", value: func(r *results.Results) float64 { return float64(r.Tokens.Cached) }},
	{Name: "tokens.reasoning", Unit: Tokens, Doc: "reasoning tokens", value: func(r *results.Results) float64 { return float64(r.Tokens.Reasoning) }},
	{Name: "tokens.content", Unit: Tokens, Doc: "content tokens", value: func(r *results.Results) float64 { return float64(r.Tokens.Content) }},
}

func failedRatio(r *results.Results) float64 {
	if n := r.Requests.OK + r.Requests.Failed; n > 0 {
		return float64(r.Requests.Failed) / float64(n)
	}
	return 0
}

func completedRatio(r *results.Results) float64 {
	if r.Rounds.Planned > 0 {
		return float64(r.Rounds.Completed) / float64(r.Rounds.Planned)
	}
	return 0
}

// VerdictFigure is the name of the one figure that is not a number: the run's verdict kind,
// constrained by a list of the allowed kinds (verdict: [healthy, slow]).
const VerdictFigure = "verdict"

// figures is every numeric figure, latency statistics first, in the order docs/gate.md and
// diff list them.
var figures = buildFigures()

func buildFigures() []Figure {
	var fs []Figure
	for _, k := range latencyKinds {
		for _, s := range latencyStats {
			fs = append(fs, Figure{
				Name: k.name + "." + s.name, Unit: Seconds, Doc: s.name + " of " + k.doc,
				value:  func(r *results.Results) float64 { return s.field(k.summary(&r.Latency)) },
				series: k.series, stat: s.stat, seriesName: k.name,
			})
		}
	}
	return append(fs, counters...)
}

// Figures returns every numeric figure, in table order.
func Figures() []Figure { return append([]Figure(nil), figures...) }

// Lookup returns the figure named name.
func Lookup(name string) (Figure, bool) {
	for _, f := range figures {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// Names returns every figure name, verdict last.
func Names() []string {
	names := make([]string, 0, len(figures)+1)
	for _, f := range figures {
		names = append(names, f.Name)
	}
	return append(names, VerdictFigure)
}
