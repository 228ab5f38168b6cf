package report

import (
	"fmt"
	"html/template"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/agentsim/agentsim/events"
)

// stateColors colour the stacked agent states.
var stateColors = map[events.State]color.Color{
	events.StateRequesting: rgb(0x59a14f), events.StatePacerWait: rgb(0xf28e2b), events.StateBackoff: rgb(0xe15759),
	events.StateReading: rgb(0x76b7b2), events.StateTool: rgb(0x499894), events.StateThinking: rgb(0x4e79a7), events.StateStarting: rgb(0xd7d2cc),
	events.StateDone: rgb(0xeeeeee),
}

// statesChart stacks a run's agents per state: each state's area sits on the states below it.
// The time axis runs to endS.
func statesChart(r *Run, t *Timelines, stops []Stop, endS float64) (template.HTML, error) {
	p := newPlot(r.Label, "simulated seconds", "agents")
	cum := make([][]float64, len(t.States))
	for i, s := range t.States {
		cum[i] = make([]float64, len(s.Y))
		for j, y := range s.Y {
			cum[i][j] = y
			if i > 0 {
				cum[i][j] += cum[i-1][j]
			}
		}
	}
	// Drawn from the top of the stack down, each filled to zero, so each state shows as a band.
	for i := len(t.States) - 1; i >= 0; i-- {
		s := t.States[i]
		if allZero(s.Y) {
			continue
		}
		pts := xys(Series{X: s.X, Y: cum[i]})
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		c := stateColors[stackStates[i]]
		l.FillColor, l.Color, l.Width = c, c, vg.Points(0.5)
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	p.Y.Min, p.X.Min, p.X.Max = 0, 0, endS
	top := float64(r.Agents)
	p.Y.Max = top
	if err := stopLines(p, stops, top); err != nil {
		return "", err
	}
	return svg(p, chartW, chartH)
}

func allZero(ys []float64) bool {
	for _, y := range ys {
		if y != 0 {
			return false
		}
	}
	return true
}

// overlay draws one chart with the named series of every run: colour tells the series apart
// and the dash the runs (or, with a single series, colour tells runs apart).
func overlay(title, ylabel string, runs []*Run, pick func(i int) []Series, stops [][]Stop) (template.HTML, bool, error) {
	p := newPlot("", "simulated seconds", ylabel)
	any := false
	top := 0.0
	for i, r := range runs {
		for j, s := range pick(i) {
			if len(s.X) == 0 {
				continue
			}
			any = true
			name, c, d := s.Name, runColor(j), runDash(i)
			if len(runs) > 1 {
				name = r.Label + ": " + s.Name
			}
			if len(pick(i)) == 1 && len(runs) > 1 {
				c, d = runColor(i), nil
				name = r.Label
			}
			for _, y := range s.Y {
				top = max(top, y)
			}
			if err := line(p, s, name, c, d); err != nil {
				return "", false, err
			}
		}
	}
	if !any {
		return "", false, nil
	}
	p.Y.Min, p.Y.Max = 0, max(top*1.05, 1)
	p.X.Min = 0
	if len(runs) == 1 {
		if err := stopLines(p, stops[0], top); err != nil {
			return "", false, err
		}
	}
	s, err := svg(p, chartW, chartH)
	return s, true, err
}

// gaugeNames are the server gauges drawn on the count chart; kv_usage and gen_tok_s go with
// the fraction and rate charts.
var gaugeNames = []string{events.DecodeRunning, events.PrefillInflight, events.Queued}

// pickGauges returns a run's count gauges in report order.
func pickGauges(t *Timelines) []Series {
	var out []Series
	for _, n := range gaugeNames {
		if s, ok := t.Gauges[n]; ok {
			out = append(out, s)
		}
	}
	return out
}

// ecdf returns the empirical distribution of xs as a step line: the fraction of observations
// ≤ x.
func ecdf(name string, xs []float64) Series {
	v := append([]float64(nil), xs...)
	sort.Float64s(v)
	s := Series{Name: name}
	for i, x := range v {
		if i > 0 {
			s.X, s.Y = append(s.X, x), append(s.Y, float64(i)/float64(len(v)))
		}
		s.X, s.Y = append(s.X, x), append(s.Y, float64(i+1)/float64(len(v)))
	}
	return s
}

// latencyChart draws the distribution of one latency of every run as empirical CDFs, on a
// logarithmic axis when the values span more than two decades.
func latencyChart(title string, runs []*Run, pick func(*Latencies) []float64, lats []*Latencies) (template.HTML, bool, error) {
	p := newPlot(title, "simulated seconds", "fraction ≤ x")
	lo, hi := math.Inf(1), 0.0
	var cdfs []Series
	for i := range runs {
		s := ecdf(runs[i].Label, pick(lats[i]))
		for _, x := range s.X {
			if x > 0 {
				lo = min(lo, x)
			}
			hi = max(hi, x)
		}
		cdfs = append(cdfs, s)
	}
	if hi == 0 {
		return "", false, nil
	}
	logX := lo > 0 && hi/lo > 100
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.X.Min = lo
	}
	for i, s := range cdfs {
		n := len(pick(lats[i]))
		if n == 0 {
			continue
		}
		if logX { // a zero has no place on a logarithmic axis: it counts, from the axis' start
			for j := range s.X {
				s.X[j] = max(s.X[j], lo)
			}
		}
		name := fmt.Sprintf("%s (n=%d)", runs[i].Label, n)
		if len(runs) == 1 {
			name = fmt.Sprintf("n=%d", n)
		}
		if err := line(p, s, name, runColor(i), nil); err != nil {
			return "", false, err
		}
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	s, err := svg(p, smallW, smallH)
	return s, true, err
}
