package bench

import (
	"fmt"
	"io"

	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/results"
)

// Rounds is the range of agent rounds in which the agentic workload's failed rounds ended,
// 1-based; the zero value means none failed.
type Rounds struct{ Lo, Hi int }

func (r Rounds) String() string {
	if r.Lo == r.Hi {
		return fmt.Sprintf("round %d", r.Lo)
	}
	return fmt.Sprintf("rounds %d–%d", r.Lo, r.Hi)
}

// Conclusion is compare's one-line conclusion from the synthetic part (a bench result) and the
// agentic part (a run result), e.g. "synthetic healthy (16/16 in 5.4 s); agentic stopped
// making progress in round 2 (deadlock) — the fault shows only under long, growing contexts".
// failed is the range of rounds the agentic part's failed rounds were in.
func Conclusion(syn, ag *results.Results, failed Rounds) string {
	s := synthetic(syn)
	if ag == nil {
		return s + "; agentic part not run"
	}
	a := agentic(ag, failed)
	synOK := diagnose.Progressing(syn.Verdict.Kind) && !syn.Interrupted
	switch {
	case ag.Interrupted:
		return s + "; " + a
	case !synOK:
		return s + "; " + a + " — the server fails even short synthetic requests: look at those first"
	case diagnose.Progressing(ag.Verdict.Kind):
		return s + "; " + a + " — the server handles both"
	case diagnose.Stuck(ag.Verdict.Kind):
		return s + "; " + a + " — the fault shows only under long, growing contexts"
	}
	return s + "; " + a + " — the short synthetic benchmark misses what the agentic workload hits"
}

// synthetic describes the synthetic part in a few words.
func synthetic(r *results.Results) string {
	q := r.Requests
	switch {
	case r.Interrupted:
		return fmt.Sprintf("synthetic interrupted (%d/%d ok)", q.OK, q.Sent)
	case r.Verdict.Kind == diagnose.Healthy:
		return fmt.Sprintf("synthetic healthy (%d/%d in %s)", q.OK, q.Sent, results.Seconds(r.SimSeconds))
	case r.Verdict.Kind == diagnose.Slow:
		return fmt.Sprintf("synthetic slow but complete (%d/%d in %s)", q.OK, q.Sent, results.Seconds(r.SimSeconds))
	}
	return fmt.Sprintf("synthetic failed (%d/%d ok in %s)", q.OK, q.Sent, results.Seconds(r.SimSeconds))
}

// agentic describes the agentic part in a few words.
func agentic(r *results.Results, failed Rounds) string {
	k := r.Verdict.Kind
	switch {
	case r.Interrupted:
		return fmt.Sprintf("agentic interrupted after %d/%d rounds", r.Rounds.Completed, r.Rounds.Planned)
	case k == diagnose.Healthy:
		return fmt.Sprintf("agentic healthy (%d/%d rounds, e2e p50 %s)", r.Rounds.Completed, r.Rounds.Planned, results.Seconds(r.Latency.E2E.P50))
	case k == diagnose.Slow:
		return fmt.Sprintf("agentic slow but progressing (%d/%d rounds, e2e p50 %s)", r.Rounds.Completed, r.Rounds.Planned, results.Seconds(r.Latency.E2E.P50))
	case diagnose.Stuck(k) && failed.Lo > 0 && failed.Hi > failed.Lo:
		return fmt.Sprintf("agentic stopped making progress in round %d (%s; agents stuck in %s)", failed.Lo, k, failed)
	case diagnose.Stuck(k) && failed.Lo > 0:
		return fmt.Sprintf("agentic stopped making progress in %s (%s)", failed, k)
	case diagnose.Stuck(k):
		return fmt.Sprintf("agentic stopped making progress (%s)", k)
	}
	return fmt.Sprintf("agentic %s: %s", k, r.Verdict.Summary)
}

// PrintSideBySide prints the two parts as a table: time, requests, latency, output rate, peak
// decode batch and verdict. Times are simulated seconds; the output rate is every output token
// over the part's simulated time.
func PrintSideBySide(w io.Writer, syn, ag *results.Results) {
	rows := []struct {
		name string
		cell func(*results.Results) string
	}{
		{"time (simulated)", func(r *results.Results) string { return results.Seconds(r.SimSeconds) }},
		{"requests ok/failed", func(r *results.Results) string {
			q := r.Requests
			return fmt.Sprintf("%d/%d", q.OK, q.Errors+q.Timeouts+q.Cancelled+q.InFlight)
		}},
		{"latency p50", func(r *results.Results) string { return seconds(r.Latency.E2E.N, r.Latency.E2E.P50) }},
		{"latency p99", func(r *results.Results) string { return seconds(r.Latency.E2E.N, r.Latency.E2E.P99) }},
		{"output tok/s", func(r *results.Results) string { return fmt.Sprintf("%.1f", r.Tokens.OutputPerSecond) }},
		{"peak decode_running", func(r *results.Results) string {
			if r.Server.DecodeRunning.N == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.0f", r.Server.DecodeRunning.Max)
		}},
		{"verdict", func(r *results.Results) string { return r.Verdict.Kind }},
	}
	fmt.Fprintf(w, "  %-20s %-16s %s\n", "", "synthetic", "agentic")
	for _, row := range rows {
		a := "not run"
		if ag != nil {
			a = row.cell(ag)
		}
		fmt.Fprintf(w, "  %-20s %-16s %s\n", row.name, row.cell(syn), a)
	}
}

// seconds renders a latency statistic of n observations.
func seconds(n int, v float64) string {
	if n == 0 {
		return "n/a"
	}
	return results.Seconds(v)
}
