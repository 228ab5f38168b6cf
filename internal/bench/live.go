package bench

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/harness"
)

// live prints the harness's samples as they are taken: the server-metrics line before the first
// sample of the run, then, outside a sweep, one line per sample; and, as the harness.Observer of
// each test's run, the notes and warnings the run gives. Its calls come one at a time, from the
// harness's sampler.
type live struct {
	out   io.Writer
	sweep bool
	shown string // the server-metrics line printed, "" before the first
}

var _ harness.Observer = (*live)(nil)

// Warned prints a note or warning of the run on a line of its own.
func (l *live) Warned(msg string) { fmt.Fprintln(l.out, msg) }

// Ticked does nothing: sample prints each sample, with the gauges a test is about.
func (l *live) Ticked(events.Sample, float64, string) {}

// Stopped does nothing: bench draws no status line to clear.
func (l *live) Stopped() {}

func (l *live) sample(s events.Sample, metrics string) {
	if l.shown == "" {
		fmt.Fprintln(l.out, metrics)
		l.shown = metrics
	}
	if !l.sweep {
		fmt.Fprintln(l.out, SampleLine(s.TS, s))
	}
}

// lineGauges are the server gauges a sample line shows, in order, with their formats.
var lineGauges = []struct{ name, format string }{
	{events.DecodeRunning, "%.1f"}, {events.PrefillInflight, "%.1f"},
	{events.Queued, "%.1f"}, {events.KVUsage, "%.3f"},
}

// SampleLine renders a sample at tS simulated seconds into its test in the incident's shape,
// "t= 2.3s decode_running=16.0 prefill_inflight=16.0", followed by queued and kv_usage (a
// fraction 0–1) when the server has them. When the server exposes none of these gauges the
// line shows the client's view instead: "t= 2.3s in_flight=16 chunks=412".
func SampleLine(tS float64, s events.Sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "t=%4.1fs", tS)
	shown := 0
	for _, g := range lineGauges {
		if v, ok := s.Server[g.name]; ok {
			fmt.Fprintf(&b, " %s="+g.format, g.name, v)
			shown++
		}
	}
	if shown == 0 {
		fmt.Fprintf(&b, " in_flight=%d chunks=%d", s.InFlight, s.ChunksIn)
	}
	return b.String()
}

// end prints the server-metrics line as the test's results record it when it differs from the
// one printed first: a counter a server exports only once a request has ended (vLLM's
// generation_tokens_total) is found after the first sample.
func (l *live) end(metrics string) {
	if l.shown != "" && metrics != l.shown {
		fmt.Fprintln(l.out, "at the end: "+metrics)
		l.shown = metrics
	}
}
