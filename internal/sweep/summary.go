package sweep

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/agentsim/agentsim/results"
)

// SummarySchema identifies summary.json's format.
const SummarySchema = "agentsim.sweep-summary/v1"

// Summary is the sweep's table: one row per cell, its runs across seeds pooled. Times are
// simulated seconds.
type Summary struct {
	Schema string `json:"schema"`
	// Workload is the workload's name; Keys are the grid's keys, the columns before fault.
	Workload string   `json:"workload"`
	Keys     []string `json:"keys"`
	// Seeds is the number of seeds each cell runs.
	Seeds int    `json:"seeds"`
	Cells []Cell `json:"cells"`
	// NotRun lists the indices without a finished run (never started, failed, or
	// interrupted); Interrupted those among them that were interrupted.
	NotRun      []int `json:"not_run"`
	Interrupted []int `json:"interrupted"`
	// LagDistorted counts the runs whose harness lag distorted their figures.
	LagDistorted int `json:"lag_distorted_runs"`
	// Unreadable lists the run directories that hold a results.json but could not be
	// read, each with why; their runs count as not run.
	Unreadable []string `json:"unreadable,omitempty"`
}

// Cell is one row of the table: one value of each grid key and one fault, across seeds.
type Cell struct {
	// Values holds the cell's value of each key in Summary.Keys; Fault its fault value.
	Values []string `json:"values"`
	Fault  string   `json:"fault"`
	// Runs is the number of runs planned (one per seed), Finished those that finished.
	Runs     int `json:"runs"`
	Finished int `json:"finished"`
	// Verdicts counts the finished runs by verdict; VerdictText says it as the table does,
	// most frequent first: "3/5 slow 2/5 pacer-starvation".
	Verdicts    map[results.VerdictKind]int `json:"verdicts"`
	VerdictText string                      `json:"verdict_text"`
	// GoodputPerHour is the rounds completed per simulated hour over the finished runs.
	GoodputPerHour float64 `json:"goodput_rounds_per_sim_hour"`
	// E2EP50S, E2EP99S and PacerWaitP99S are taken over every request of the finished
	// runs; nil when there was none.
	E2EP50S       *float64 `json:"e2e_p50_s"`
	E2EP99S       *float64 `json:"e2e_p99_s"`
	PacerWaitP99S *float64 `json:"pacer_wait_p99_s"`
	// FirstStallS is the median (p50 by nearest rank, as results.json's) of the runs' times
	// to their first stall, over the Stalled runs that had one; nil when none did.
	FirstStallS *float64 `json:"first_stall_median_s"`
	Stalled     int      `json:"stalled_runs"`
	// LagDistorted counts the runs whose harness lag distorted their figures.
	LagDistorted int `json:"lag_distorted_runs"`
	// Expected is set by Expect: whether every finished run's verdict was expected.
	Expected *bool `json:"expected,omitempty"`
	// RunList details each run of the cell, in seed order.
	RunList []RunSummary `json:"runs_detail"`
}

// RunSummary is one run of a cell.
type RunSummary struct {
	Index int    `json:"index"`
	Seed  int64  `json:"seed"`
	Dir   string `json:"dir"`
	// State is "finished", "interrupted" or "not run".
	State       string              `json:"state"`
	Verdict     results.VerdictKind `json:"verdict,omitempty"`
	Summary     string              `json:"summary,omitempty"`
	FirstStallS *float64            `json:"first_stall_s,omitempty"`
	SimSeconds  float64             `json:"sim_seconds,omitempty"`
	WallSeconds float64             `json:"wall_seconds,omitempty"`
	LagWarning  string              `json:"lag_warning,omitempty"`
}

// The states of a run.
const (
	StateFinished    = "finished"
	StateInterrupted = "interrupted"
	StateNotRun      = "not run"
)

// Aggregate builds the table from the plan and the figures of the runs that have them
// (indexed by completion index; a missing entry is a run that did not run).
func Aggregate(p *Plan, figs map[int]*Figures) *Summary {
	s := &Summary{Schema: SummarySchema, Workload: p.Base.Name, Seeds: len(p.Seeds), NotRun: []int{}, Interrupted: []int{}}
	for _, d := range p.Grid {
		s.Keys = append(s.Keys, d.Key)
	}
	var acc *cellAcc
	for _, r := range p.Runs {
		if acc == nil || !slices.Equal(acc.cell.Values, r.Values) || acc.cell.Fault != r.Fault {
			if acc != nil {
				s.Cells = append(s.Cells, acc.finish())
			}
			acc = &cellAcc{cell: Cell{Values: r.Values, Fault: r.Fault, Verdicts: map[results.VerdictKind]int{}}}
		}
		f := figs[r.Index]
		rs := acc.add(r, f)
		switch rs.State {
		case StateInterrupted:
			s.Interrupted = append(s.Interrupted, r.Index)
			fallthrough
		case StateNotRun:
			s.NotRun = append(s.NotRun, r.Index)
		}
	}
	if acc != nil {
		s.Cells = append(s.Cells, acc.finish())
	}
	for _, c := range s.Cells {
		s.LagDistorted += c.LagDistorted
	}
	return s
}

// cellAcc accumulates one cell's runs.
type cellAcc struct {
	cell      Cell
	e2e, wait []float64
	stalls    []float64
	rounds    int
	simS      float64
}

// add adds run r with its figures (nil when it has none) and returns its summary.
func (a *cellAcc) add(r Run, f *Figures) RunSummary {
	a.cell.Runs++
	rs := RunSummary{Index: r.Index, Seed: r.Seed, Dir: r.Dir, State: StateNotRun}
	switch {
	case f == nil:
	case f.Interrupted:
		rs.State = StateInterrupted
	default:
		rs.State = StateFinished
		rs.Verdict, rs.Summary, rs.FirstStallS = f.Verdict.Kind, f.Verdict.Summary, f.FirstStallS
		rs.SimSeconds, rs.WallSeconds, rs.LagWarning = f.SimSeconds, f.WallSeconds, f.LagWarning
		a.cell.Finished++
		a.cell.Verdicts[f.Verdict.Kind]++
		a.e2e = append(a.e2e, f.E2E...)
		a.wait = append(a.wait, f.PacerWait...)
		a.rounds += f.RoundsCompleted
		a.simS += f.SimSeconds
		if f.FirstStallS != nil {
			a.stalls = append(a.stalls, *f.FirstStallS)
		}
		if f.LagWarning != "" {
			a.cell.LagDistorted++
		}
	}
	a.cell.RunList = append(a.cell.RunList, rs)
	return rs
}

// finish computes the cell's pooled figures.
func (a *cellAcc) finish() Cell {
	c := a.cell
	c.VerdictText = verdictText(c.Verdicts, c.Runs, c.Runs-c.Finished)
	if a.simS > 0 {
		c.GoodputPerHour = float64(a.rounds) / a.simS * 3600
	}
	if len(a.e2e) > 0 {
		e := results.Summarize(a.e2e)
		c.E2EP50S, c.E2EP99S = &e.P50, &e.P99
	}
	if len(a.wait) > 0 {
		w := results.Summarize(a.wait)
		c.PacerWaitP99S = &w.P99
	}
	c.Stalled = len(a.stalls)
	if len(a.stalls) > 0 {
		m := results.Summarize(a.stalls).P50
		c.FirstStallS = &m
	}
	return c
}

// verdictText says a cell's verdicts across its runs, the most frequent first (ties in
// results.VerdictKinds order), then the runs that did not finish: "3/5 slow 2/5 pacer-starvation",
// "2/3 deadlock 1/3 not run".
func verdictText(counts map[results.VerdictKind]int, runs, notRun int) string {
	kinds := make([]results.VerdictKind, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(x, y results.VerdictKind) int {
		return cmp.Or(cmp.Compare(counts[y], counts[x]), cmp.Compare(kindRank(x), kindRank(y)), strings.Compare(string(x), string(y)))
	})
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d/%d %s", counts[k], runs, k))
	}
	if notRun > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d not run", notRun, runs))
	}
	return strings.Join(parts, " ")
}

// kindRank is k's position in results.VerdictKinds, after them for an unknown kind.
func kindRank(k results.VerdictKind) int {
	if i := slices.Index(results.VerdictKinds, k); i >= 0 {
		return i
	}
	return len(results.VerdictKinds)
}

// Expect marks each cell expected or not: a cell falls outside when a finished run's verdict
// is not among kinds. It returns the cells that fell outside, in words.
func (s *Summary) Expect(kinds []results.VerdictKind) []string {
	var outside []string
	for i := range s.Cells {
		c := &s.Cells[i]
		ok := true
		var bad []string
		for k, n := range c.Verdicts {
			if n > 0 && !slices.Contains(kinds, k) {
				ok = false
				bad = append(bad, string(k))
			}
		}
		c.Expected = &ok
		if !ok {
			slices.Sort(bad)
			outside = append(outside, fmt.Sprintf("%s: %s (not %s)", s.CellName(*c), c.VerdictText, strings.Join(bad, ", ")))
		}
	}
	return outside
}

// CellName names a cell in words: "pacer.kind=aimd fault=long-context-wedge".
func (s *Summary) CellName(c Cell) string {
	var parts []string
	for i, k := range s.Keys {
		parts = append(parts, k+"="+c.Values[i])
	}
	return strings.Join(append(parts, "fault="+c.Fault), " ")
}
