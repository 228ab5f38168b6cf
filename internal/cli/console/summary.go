package console

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/internal/scrape"
	"github.com/agentsim/agentsim/results"
)

// PrintSummary prints the end-of-run summary: counts, latencies (simulated seconds), tokens,
// server gauges and the verdict with its evidence.
func PrintSummary(w io.Writer, r *results.Results, dir string) {
	speedup := fmt.Sprintf("%g", r.Speedup)
	if r.SpeedupAchieved != nil {
		speedup = r.SpeedupAchieved.Mode
	}
	fmt.Fprintf(w, "agentsim %s: %s against %s, speedup %s\n", r.Command, r.Workload, r.Server, speedup)
	if r.Interrupted {
		fmt.Fprintln(w, "  INTERRUPTED")
	}
	q := r.Requests
	rows := [][2]string{
		{"time", fmt.Sprintf("%.1f s simulated, %.1f s wall", r.SimSeconds, r.WallSeconds)},
		{"rounds", fmt.Sprintf("%d/%d completed, %d failed, %d not started", r.Rounds.Completed, r.Rounds.Planned, r.Rounds.Failed, r.Rounds.NotStarted)},
		{"requests", fmt.Sprintf("%d sent: %d ok, %s, %s, %d cancelled, %d in flight; %s, %d stalled",
			q.Sent, q.OK, plural.Of(q.Errors, "error"), plural.Of(q.Timeouts, "timeout"), q.Cancelled, q.InFlight, irregular(q.Retries, "retry", "retries"), q.Stalled)},
		{"e2e", summaryLine(r.Latency.E2E)},
		{"ttft", summaryLine(r.Latency.TTFT)},
		{"ttft content", summaryLine(r.Latency.TTFTContent)},
		{"tpot", summaryLine(r.Latency.TPOT)},
		{"pacer wait", summaryLine(r.Latency.PacerWait)},
		{"tokens", fmt.Sprintf("%.1f output tok/s; prompt %s (%d cached), reasoning %s, content %s",
			r.Tokens.OutputPerSecond, plural.Of(int(r.Tokens.Prompt), "token"), r.Tokens.Cached, plural.Of(int(r.Tokens.Reasoning), "token"), plural.Of(int(r.Tokens.Content), "token"))},
		{"stream", streamLine(r.Stream)},
		{"server", gaugesLine(r.Server)},
		{"", r.Server.Metrics},
	}
	if a := r.SpeedupAchieved; a != nil {
		rows = slices.Insert(rows, 1, [2]string{"speedup", speedupLine(a)})
	}
	rows = append(rows, toolsRows(r.Tools)...)
	if r.Server.Model != "" {
		rows = append(rows, [2]string{"model", modelLine(r.Server)})
	}
	for i, f := range r.Failures {
		rows = append(rows, [2]string{label(i, "failures"), fmt.Sprintf("%d %s, first at t=%s s: %q", f.Count, f.Key(), results.Figure(f.FirstS), f.FirstMessage)})
	}
	for i, w := range r.Warnings {
		rows = append(rows, [2]string{label(i, "warnings"), w})
	}
	rows = append(rows, [2]string{"verdict", string(r.Verdict.Kind) + ": " + r.Verdict.Summary})
	for _, e := range r.Verdict.Evidence {
		rows = append(rows, [2]string{"", "- " + e})
	}
	rows = append(rows, harnessRows(r.Harness)...)
	rows = append(rows, [2]string{"files", dir + "/{events.jsonl, samples.jsonl, results.json, config.yaml}"})
	for _, row := range rows {
		fmt.Fprintf(w, "  %-13s %s\n", row[0], row[1])
	}
}

// summaryLine renders a latency summary in seconds.
func summaryLine(s results.Summary) string {
	if s.N == 0 {
		return "no samples"
	}
	return fmt.Sprintf("mean %s  p50 %s  p90 %s  p99 %s  max %s  (n=%d)",
		results.Seconds(s.Mean), results.Seconds(s.P50), results.Seconds(s.P90), results.Seconds(s.P99), results.Seconds(s.Max), s.N)
}

// streamLine renders the stream figures: the frames received and their rates, the tokens per
// token-carrying frame, and the server's own chunk count when it keeps one.
func streamLine(s results.Stream) string {
	line := fmt.Sprintf("%s frames, %s/s simulated, %s/s wall; %s tokens per chunk",
		results.Count(s.Frames), results.Figure(s.FramesPerSecond), results.Figure(s.FramesPerWallSecond), perChunk(s.TokensPerChunk))
	if v := s.Server; v != nil {
		line += fmt.Sprintf("; server: %s chunks of %s tokens, %s behind, %s coalesced (stream_interval %s, coalesce limit %s)",
			results.Count(v.Chunks), perChunk(v.TokensPerChunk), results.Count(v.Behind), results.Count(v.Coalesced),
			plural.Of(v.StreamInterval, "token"), plural.Of(v.CoalesceTokens, "token"))
	}
	return line
}

// gaugesLine renders what the server's gauges showed: each gauge's mean and maximum over the
// samples that read it, "not found" for decode_running and prefill_inflight when no sample
// did, queued only when found; or, when /metrics could not be read at all, that the gauges are
// not available (the line after it says why).
func gaugesLine(s results.Server) string {
	samples := fmt.Sprintf("(%d sample%s)", s.Samples, plural.S(s.Samples))
	g := []struct {
		name string
		v    results.MeanMax
	}{{events.DecodeRunning, s.DecodeRunning}, {events.PrefillInflight, s.PrefillInflight}, {events.Queued, s.Queued}}
	read := false
	for _, x := range g {
		read = read || x.v.N > 0
	}
	if !read && scrape.Unavailable(s.Metrics) {
		return "gauges not available: /metrics could not be read " + samples
	}
	var parts []string
	for _, x := range g {
		switch {
		case x.v.N > 0:
			parts = append(parts, fmt.Sprintf("%s mean %.1f max %.0f", x.name, x.v.Mean, x.v.Max))
		case x.name != events.Queued:
			parts = append(parts, x.name+" not found")
		}
	}
	return strings.Join(parts, "; ") + " " + samples
}

// modelLine describes the model sent: "Qwen/Qwen3-0.6B (from the server; context window 8192
// tokens)".
func modelLine(s results.Server) string {
	var about []string
	if s.ModelSource != "" {
		about = append(about, "from the "+s.ModelSource)
	}
	switch {
	case s.ContextWindow > 0 && s.ContextWindowSource == results.FromMetaNCtx:
		about = append(about, fmt.Sprintf("context window %d tokens per slot, meta.n_ctx", s.ContextWindow))
	case s.ContextWindow > 0:
		about = append(about, fmt.Sprintf("context window %d tokens", s.ContextWindow))
	}
	if len(about) == 0 {
		return s.Model
	}
	return s.Model + " (" + strings.Join(about, "; ") + ")"
}

// label is a row's label: name on its first row, blank after.
func label(i int, name string) string {
	if i == 0 {
		return name
	}
	return ""
}

// harnessRows renders the harness's scheduling lag, the embedded simulator's, and their
// warnings, if any.
func harnessRows(h *results.Harness) [][2]string {
	if h == nil {
		return nil
	}
	rows := [][2]string{{"harness lag", fmt.Sprintf("p50 %s  p99 %s  max %s  (simulated, over %s)",
		results.Seconds(h.Lag.P50), results.Seconds(h.Lag.P99), results.Seconds(h.Lag.Max), plural.Of(int(h.Lag.N), "wait"))}}
	if h.Warning != "" {
		rows = append(rows, [2]string{"", "WARNING: " + h.Warning})
	}
	if s := h.SimulatorLag; s != nil {
		rows = append(rows, [2]string{"simulator lag", fmt.Sprintf("p50 %s  p99 %s  max %s  (simulated, over %s)",
			results.Seconds(s.P50), results.Seconds(s.P99), results.Seconds(s.Max), irregular(int(s.N), "delivery", "deliveries"))})
	}
	if h.SimulatorWarning != "" {
		rows = append(rows, [2]string{"", "WARNING: " + h.SimulatorWarning})
	}
	return rows
}

// perChunk renders tokens per chunk with two decimals: 1.00, 3.47.
func perChunk(v float64) string { return fmt.Sprintf("%.2f", v) }

// irregular says n of a noun whose plural is not made with an s: "1 retry", "3 retries".
func irregular(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// speedupLine says how fast a --speedup max run went: "speedup max: 40–180×, median 120×
// (aiming to hold lag within 0.3 s simulated, 1 % of stall_after)".
func speedupLine(a *results.SpeedupAchieved) string {
	return fmt.Sprintf("speedup %s: %.0f–%.0f×, median %.0f× (aiming to hold lag within %s simulated, 1 %% of stall_after)",
		a.Mode, a.Min, a.Max, a.Median, results.Seconds(a.LagBoundS))
}
