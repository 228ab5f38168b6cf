package report

import (
	"fmt"
	"html/template"
	"io"
	"math"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// page is what the template renders.
type page struct {
	Title    string
	Runs     []runView
	Figures  []figureRow
	Headers  []string
	Sections []section
	Gantts   []ganttView
	Latency  []template.HTML
	Phases   []legendItem
	// Curve is the bench sweeps' throughput curve, with its note; empty without a sweep.
	Curve     template.HTML
	CurveNote string
	Version   string
}

type runView struct {
	Label, Command, Workload, Server, Verdict, Summary, Conclusion string
	// Warnings are the run's own (results.json warnings) and the harness's lag warning: what
	// makes its figures less trustworthy.
	Warnings []string
	Good     bool
	Evidence []string
	Shape    string
}

type figureRow struct {
	Name  string
	Cells []string
}

type section struct {
	Title  string
	Charts []template.HTML
}

type ganttView struct {
	Label, Note string
	Chart       template.HTML
}

type legendItem struct {
	Name, Color string
	Mark        bool
}

// Options are the report's settings.
type Options struct {
	// Title heads the page ("" : "agentsim report").
	Title string
	// Version names the agentsim that wrote the report, in its footer.
	Version string
	// Curves are the throughput curves of the bench sweeps among the directories (Curves),
	// drawn on one chart; none: no such chart.
	Curves []*Curve
}

// Render writes the report of runs to w as one self-contained HTML page: styles inline,
// charts inline SVG, no script and no reference to anything outside the file.
func Render(w io.Writer, runs []*Run, o Options) error {
	if len(runs) == 0 {
		return fmt.Errorf("report: no runs")
	}
	pg := page{Title: o.Title, Version: o.Version}
	if pg.Title == "" {
		pg.Title = "agentsim report"
	}
	tls := make([]*Timelines, len(runs))
	lats := make([]*Latencies, len(runs))
	gs := make([]*Gantt, len(runs))
	stops := make([][]Stop, len(runs))
	for i, r := range runs {
		tls[i], lats[i], gs[i] = BuildTimelines(r), BuildLatencies(r), BuildGantt(r)
		stops[i] = gs[i].Stops
		pg.Runs = append(pg.Runs, viewRun(r))
		pg.Headers = append(pg.Headers, r.Label)
	}
	pg.Figures = figures(runs)
	ends := sharedEnds(gs)
	var err error
	if len(o.Curves) > 0 {
		if pg.Curve, err = curveChart(o.Curves); err != nil {
			return err
		}
		pg.CurveNote = curveNote(o.Curves)
	}
	if pg.Sections, err = timelineSections(runs, tls, stops, ends); err != nil {
		return err
	}
	for i, r := range runs {
		c, note, err := ganttChart(gs[i], ends[i])
		if err != nil {
			return err
		}
		pg.Gantts = append(pg.Gantts, ganttView{Label: r.Label, Note: note, Chart: c})
	}
	if pg.Latency, err = latencyCharts(runs, lats); err != nil {
		return err
	}
	for p := range nPhases {
		r, g, b, _ := phaseColors[p].RGBA()
		pg.Phases = append(pg.Phases, legendItem{Name: p.String(), Color: fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8), Mark: p == PhaseFailed})
	}
	return pageTemplate.Execute(w, pg)
}

// sharedEnds returns where each run's time axis ends in the charts drawn per run: runs of
// comparable length (the longest at most 4 times the shortest) share one axis, so that the
// same place means the same time; otherwise (a 6 s synthetic bench beside an hour of agents)
// each run gets its own, so the short one stays readable.
func sharedEnds(gs []*Gantt) []float64 {
	lo, hi := math.Inf(1), 1.0
	for _, g := range gs {
		lo, hi = min(lo, max(g.EndS, 1)), max(hi, g.EndS)
	}
	ends := make([]float64, len(gs))
	for i, g := range gs {
		ends[i] = hi
		if hi > 4*lo {
			ends[i] = max(g.EndS, 1)
		}
	}
	return ends
}

func viewRun(r *Run) runView {
	res := r.Results
	v := runView{Label: r.Label, Command: res.Command, Workload: res.Workload, Server: res.Server.String(),
		Verdict: string(res.Verdict.Kind), Summary: res.Verdict.Summary, Evidence: res.Verdict.Evidence,
		Good: res.Verdict.Kind.Progressing(), Conclusion: res.Conclusion}
	v.Shape = fmt.Sprintf("%s × %s, %s simulated, speedup %g", plural.Of(r.Agents, "agent"), plural.Of(r.Rounds, "round"), secondsText(res.SimSeconds), res.Speedup)
	if res.Interrupted {
		v.Shape += ", interrupted"
	}
	v.Warnings = append(v.Warnings, res.Warnings...)
	if res.Harness != nil && res.Harness.Warning != "" {
		v.Warnings = append(v.Warnings, res.Harness.Warning)
	}
	return v
}

// figures is the table of key figures, one column per run.
func figures(runs []*Run) []figureRow {
	rows := []struct {
		name string
		f    func(*results.Results) string
	}{
		{"rounds completed / planned (failed)", func(r *results.Results) string {
			return fmt.Sprintf("%d / %d (%d)", r.Rounds.Completed, r.Rounds.Planned, r.Rounds.Failed)
		}},
		{"requests sent / ok", func(r *results.Results) string { return fmt.Sprintf("%d / %d", r.Requests.Sent, r.Requests.OK) }},
		{"errors / timeouts / cancelled", func(r *results.Results) string {
			return fmt.Sprintf("%d / %d / %d", r.Requests.Errors, r.Requests.Timeouts, r.Requests.Cancelled)
		}},
		{"stalled (silent ≥ stall_after)", func(r *results.Results) string { return fmt.Sprint(r.Requests.Stalled) }},
		{"TTFT p50 / p90 / p99", func(r *results.Results) string { return quantiles(r.Latency.TTFT) }},
		{"TTFT content p50 / p90 / p99", func(r *results.Results) string { return quantiles(r.Latency.TTFTContent) }},
		{"end-to-end p50 / p90 / p99", func(r *results.Results) string { return quantiles(r.Latency.E2E) }},
		{"ITL p50 / p90 / p99", func(r *results.Results) string { return quantiles(r.Latency.ITL) }},
		{"pacer wait p50 / p90 / p99", func(r *results.Results) string { return quantiles(r.Latency.PacerWait) }},
		{"output tokens/s", func(r *results.Results) string { return fmt.Sprintf("%.1f tok/s", r.Tokens.OutputPerSecond) }},
		{"harness scheduling lag p50 / p99 / max", func(r *results.Results) string {
			if r.Harness == nil || r.Harness.Lag.N == 0 {
				return "—"
			}
			l := r.Harness.Lag
			return fmt.Sprintf("%s / %s / %s", secondsText(l.P50), secondsText(l.P99), secondsText(l.Max))
		}},
		{"decode_running mean / max", func(r *results.Results) string {
			g := r.Server.DecodeRunning
			if g.N == 0 {
				return "—"
			}
			return fmt.Sprintf("%.1f / %.0f", g.Mean, g.Max)
		}},
	}
	var out []figureRow
	for _, row := range rows {
		fr := figureRow{Name: row.name}
		for _, r := range runs {
			fr.Cells = append(fr.Cells, row.f(r.Results))
		}
		out = append(out, fr)
	}
	return out
}

func quantiles(s results.Summary) string {
	if s.N == 0 {
		return "—"
	}
	return fmt.Sprintf("%s / %s / %s", secondsText(s.P50), secondsText(s.P90), secondsText(s.P99))
}

// timelineSections draws the timelines: agents per state for each run, then the overlays.
func timelineSections(runs []*Run, tls []*Timelines, stops [][]Stop, ends []float64) ([]section, error) {
	var states section
	states.Title = "Agents per state"
	for i, r := range runs {
		c, err := statesChart(r, tls[i], stops[i], ends[i])
		if err != nil {
			return nil, err
		}
		states.Charts = append(states.Charts, c)
	}
	out := []section{states}
	overlays := []struct {
		title, y string
		pick     func(i int) []Series
	}{
		{"Open and silent streams", "streams", func(i int) []Series { return []Series{tls[i].Open, tls[i].Silent} }},
		{"Pacer: permits held and agents waiting", "permits, agents", func(i int) []Series {
			return []Series{tls[i].Holders, tls[i].Waiters, tls[i].Limit}
		}},
		{"Server gauges", "requests", func(i int) []Series { return pickGauges(tls[i]) }},
		{"Server KV cache usage", "fraction", func(i int) []Series {
			if s, ok := tls[i].Gauges[events.KVUsage]; ok {
				return []Series{s}
			}
			return nil
		}},
		{"Output rate (harness: tokens of successful requests, spread over their streaming)", "tokens/s", func(i int) []Series {
			return []Series{tls[i].TokS}
		}},
		{"Harness scheduling lag (how late its own waits ended; large values distort the run's figures)", "simulated seconds", func(i int) []Series {
			if allZero(tls[i].Lag.Y) {
				return nil
			}
			return []Series{tls[i].Lag}
		}},
		{"Output rate (server's gen_tok_s gauge)", "tokens/s", func(i int) []Series {
			if s, ok := tls[i].Gauges[events.GenTokS]; ok {
				return []Series{s}
			}
			return nil
		}},
	}
	for _, o := range overlays {
		c, ok, err := overlay(o.title, o.y, runs, o.pick, stops)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, section{Title: o.title, Charts: []template.HTML{c}})
		}
	}
	return out, nil
}

// latencyCharts draws the latency distributions.
func latencyCharts(runs []*Run, lats []*Latencies) ([]template.HTML, error) {
	var out []template.HTML
	for _, l := range []struct {
		title string
		pick  func(*Latencies) []float64
	}{
		{"TTFT (first token)", func(l *Latencies) []float64 { return l.TTFT }},
		{"TTFT content (first content token)", func(l *Latencies) []float64 { return l.TTFTContent }},
		{"end-to-end latency", func(l *Latencies) []float64 { return l.E2E }},
		{"inter-token latency (mean per request)", func(l *Latencies) []float64 { return l.ITL }},
		{"pacer wait", func(l *Latencies) []float64 { return l.PacerWait }},
	} {
		c, ok, err := latencyChart(l.title, runs, l.pick, lats)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, c)
		}
	}
	return out, nil
}
