package diff

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agentsim/agentsim/internal/gate"
	"github.com/agentsim/agentsim/internal/plural"
)

// Rows are the figures the table shows, in order (docs/gate.md lists every figure; thresholds
// may name any of them).
var Rows = []string{
	"rounds.completed", "rounds.failed",
	"requests.sent", "requests.ok", "requests.failed", "requests.retries",
	"ttft.p50", "ttft.p90", "ttft.p99",
	"ttft_content.p50", "ttft_content.p90", "ttft_content.p99",
	"itl.p50", "itl.p90", "itl.p99",
	"tpot.p50", "tpot.p90", "tpot.p99",
	"e2e.p50", "e2e.p90", "e2e.p99",
	"tokens.output_per_second",
	"pacer_wait.p50", "pacer_wait.p90", "pacer_wait.p99",
}

// Table is the side-by-side comparison of two runs.
type Table struct {
	Base, New *Run
	// Changes holds one change per row of Rows.
	Changes []gate.Change
	// Differences lists the workload keys that differ (see Differences).
	Differences []string
	// Comparison holds the resamples behind the changes, for the thresholds to share.
	Comparison *gate.Comparison
}

// NewTable compares base with new, figure by figure.
func NewTable(base, new *Run) *Table {
	t := &Table{Base: base, New: new, Differences: Differences(base.Workload, new.Workload),
		Comparison: gate.NewComparison(&base.Measurement, &new.Measurement)}
	for _, name := range Rows {
		f, _ := gate.Lookup(name)
		t.Changes = append(t.Changes, t.Comparison.Change(f))
	}
	return t
}

// Write prints the table: who is compared, how the workloads differ, then one line per figure
// — base, new, and the change with its confidence interval or "no significant change".
func (t *Table) Write(w io.Writer) error {
	var b strings.Builder
	for _, side := range []struct {
		label string
		r     *Run
	}{{"base", t.Base}, {"new", t.New}} {
		fmt.Fprintf(&b, "%-4s  %s: %s\n", side.label, side.r.Dir, describe(side.r))
	}
	if len(t.Differences) > 0 {
		fmt.Fprintf(&b, "workloads differ in: %s\n", strings.Join(t.Differences, "; "))
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tbase\tnew\tchange")
	bv, nv := t.Base.Results.Verdict.Kind, t.New.Results.Verdict.Kind
	verdictChange := "no change"
	if bv != nv {
		verdictChange = "changed"
	}
	fmt.Fprintf(tw, "verdict\t%s\t%s\t%s\n", bv, nv, verdictChange)
	for _, c := range t.Changes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Figure.Name, c.Figure.Unit.Format(c.Base), c.Figure.Unit.Format(c.New), c.String())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nchanges of latency statistics: %g %% bootstrap confidence interval from the per-request samples (%d resamples, fixed seed)\n",
		gate.Confidence*100, gate.Resamples)
	_, err := io.WriteString(w, b.String())
	return err
}

// describe says what ran, in one line: "ocbrowse, 30 agents × 8 rounds, seed 1, embedded
// simulator dsv4-pd (faults none)".
func describe(r *Run) string {
	w := r.Workload
	server := r.Results.Server.String()
	if r.Results.Server.Kind == "" && server == "" {
		server = "server not recorded (no results.json: figures re-derived from the events)"
	}
	return fmt.Sprintf("%s, %s × %s, model %s, seed %d, %s", w.Name, plural.Of(w.Agents, "agent"), plural.Of(w.Rounds, "round"), w.Model, w.Seed, server)
}
