package bench

import (
	"fmt"
	"io"

	"github.com/agentsim/agentsim/results"
)

// RoundSpan is the range of agent rounds in which the agentic workload's failed rounds ended,
// 1-based; the zero value means none failed.
type RoundSpan struct{ Lo, Hi int }

// String returns "round 2" or "rounds 2–4".
func (r RoundSpan) String() string {
	if r.Lo == r.Hi {
		return fmt.Sprintf("round %d", r.Lo)
	}
	return fmt.Sprintf("rounds %d–%d", r.Lo, r.Hi)
}

// Conclusion is compare's one-line conclusion from the synthetic part (a bench result) and the
// agentic part (a run result), e.g. "synthetic healthy (16/16 in 5.4 s); agentic stopped
// making progress in round 2 (deadlock) — the fault shows only under long, growing contexts".
// failed is the range of rounds the agentic part's failed rounds were in.
func Conclusion(syn, ag *results.Results, failed RoundSpan) string {
	s := synthetic(syn)
	if ag == nil {
		return s + "; agentic part not run"
	}
	a := agentic(ag, failed)
	synOK := syn.Verdict.Kind.Progressing() && !syn.Interrupted
	switch {
	case ag.Interrupted:
		return s + "; " + a
	case !synOK && sameFailure(syn, ag):
		return s + "; " + a + " — both parts fail alike: the server refuses the requests themselves, whatever their length or number"
	case !synOK:
		return s + "; " + a + " — the server fails even short synthetic requests: look at those first"
	case ag.Verdict.Kind.Progressing():
		return s + "; " + a + " — the server handles both"
	case ag.Verdict.Kind.Stuck():
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
	case r.Verdict.Kind == results.Healthy:
		return fmt.Sprintf("synthetic healthy (%d/%d in %s)", q.OK, q.Sent, results.Seconds(r.SimSeconds))
	case r.Verdict.Kind == results.Slow:
		return fmt.Sprintf("synthetic slow but complete (%d/%d in %s)", q.OK, q.Sent, results.Seconds(r.SimSeconds))
	}
	if len(r.Failures) > 0 {
		f := r.Failures[0]
		return fmt.Sprintf("synthetic failed (%d/%d ok in %s; %d %s: %q)", q.OK, q.Sent, results.Seconds(r.SimSeconds), f.Count, f.Key(), f.FirstMessage)
	}
	return fmt.Sprintf("synthetic failed (%d/%d ok in %s)", q.OK, q.Sent, results.Seconds(r.SimSeconds))
}

// sameFailure reports whether both parts failed mostly in the same class and status, with the
// same first words from the server — a refusal of the requests themselves (a model name, a
// key), not of their length or load.
func sameFailure(syn, ag *results.Results) bool {
	if ag == nil || len(syn.Failures) == 0 || len(ag.Failures) == 0 || ag.Requests.OK > 0 {
		return false
	}
	a, b := syn.Failures[0], ag.Failures[0]
	return a.Key() == b.Key() && a.FirstMessage == b.FirstMessage
}

// agentic describes the agentic part in a few words.
func agentic(r *results.Results, failed RoundSpan) string {
	k := r.Verdict.Kind
	switch {
	case r.Interrupted:
		return fmt.Sprintf("agentic interrupted after %d/%d rounds", r.Rounds.Completed, r.Rounds.Planned)
	case k == results.Healthy:
		return fmt.Sprintf("agentic healthy (%d/%d rounds, e2e p50 %s)", r.Rounds.Completed, r.Rounds.Planned, results.Seconds(r.Latency.E2E.P50))
	case k == results.Slow:
		return fmt.Sprintf("agentic slow but progressing (%d/%d rounds, e2e p50 %s)", r.Rounds.Completed, r.Rounds.Planned, results.Seconds(r.Latency.E2E.P50))
	case k.Stuck() && failed.Lo > 0 && failed.Hi > failed.Lo:
		return fmt.Sprintf("agentic stopped making progress in round %d (%s; agents stuck in %s)", failed.Lo, k, failed)
	case k.Stuck() && failed.Lo > 0:
		return fmt.Sprintf("agentic stopped making progress in %s (%s)", failed, k)
	case k.Stuck():
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
		{"verdict", func(r *results.Results) string { return string(r.Verdict.Kind) }},
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
