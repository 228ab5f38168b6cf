package report

import (
	"fmt"
	"html/template"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// MaxAgentLanes is the most agents drawn one lane each; a run with more is drawn in at most
// this many aggregate lanes, each a group of consecutive agents showing the share of them in
// each phase.
const MaxAgentLanes = 60

// aggregateBins is the number of time bins of an aggregate Gantt chart.
const aggregateBins = 300

// phaseColors are the Gantt chart's colours, by phase.
var phaseColors = [nPhases]color.Color{
	PhasePacerWait: rgb(0xf28e2b), PhaseTool: rgb(0x499894), PhaseFirstByte: rgb(0xbab0ac), PhaseReasoning: rgb(0xb07aa1),
	PhaseContent: rgb(0x59a14f), PhaseSilence: rgb(0x222222), PhaseFailed: rgb(0xe31a1c),
}

// ganttBars draws one lane per agent (agent 0 at the top): each span a bar in its phase's
// colour, at least 0.8 pt wide so that short ones stay visible, and each failure a red mark.
type ganttBars struct {
	g *Gantt
}

// Plot implements plot.Plotter.
func (b ganttBars) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	for a, spans := range b.g.Spans {
		y := float64(b.g.Agents - 1 - a)
		lo, hi := ty(y-0.38), ty(y+0.38)
		for _, s := range spans {
			x0, x1 := tx(s.StartS), tx(s.EndS)
			if s.Phase == PhaseFailed {
				x0, x1 = x0-vg.Points(1.5), x0+vg.Points(1.5)
				lo, hi := ty(y-0.5), ty(y+0.5)
				fillRect(c, x0, x1, lo, hi, phaseColors[PhaseFailed])
				continue
			}
			if x1-x0 < vg.Points(0.8) {
				x1 = x0 + vg.Points(0.8)
			}
			fillRect(c, x0, x1, lo, hi, phaseColors[s.Phase])
		}
	}
}

// DataRange implements plot.DataRanger.
func (b ganttBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, b.g.EndS, -0.5, float64(b.g.Agents) - 0.5
}

// laneBars draws aggregate lanes: in each time bin a stacked column of the phases' shares of
// the lane's agents, and a red mark where attempts failed.
type laneBars struct {
	lanes []Lane
	binS  float64
	endS  float64
}

// Plot implements plot.Plotter.
func (b laneBars) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	n := len(b.lanes)
	for i, l := range b.lanes {
		y := float64(n - 1 - i)
		for bin, share := range l.Share {
			// Each column overlaps the next by a hair, so no seam of background shows between them.
			x0, x1 := tx(float64(bin)*b.binS), tx(float64(bin+1)*b.binS)+vg.Points(0.4)
			base := y - 0.42
			for ph, f := range share {
				if f <= 0 {
					continue
				}
				fillRect(c, x0, x1, ty(base), ty(base+0.84*f), phaseColors[ph])
				base += 0.84 * f
			}
			if l.Failed[bin] > 0 {
				x := tx((float64(bin) + 0.5) * b.binS)
				fillRect(c, x-vg.Points(1.2), x+vg.Points(1.2), ty(y-0.5), ty(y+0.5), phaseColors[PhaseFailed])
			}
		}
	}
}

// DataRange implements plot.DataRanger.
func (b laneBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, b.endS, -0.5, float64(len(b.lanes)) - 0.5
}

func fillRect(c draw.Canvas, x0, x1, y0, y1 vg.Length, col color.Color) {
	c.FillPolygon(col, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
}

// laneTicks labels lanes from the top: every lane when there are few, else every k-th.
func laneTicks(n int, label func(i int) string) plot.Ticker {
	return plot.TickerFunc(func(_, _ float64) []plot.Tick {
		step := max(1, (n+29)/30)
		var ts []plot.Tick
		for i := 0; i < n; i++ {
			t := plot.Tick{Value: float64(n - 1 - i)}
			if i%step == 0 {
				t.Label = label(i)
			}
			ts = append(ts, t)
		}
		return ts
	})
}

// ganttChart draws a run's Gantt chart: one lane per agent, or aggregate lanes when the run
// has more than MaxAgentLanes agents; the stops are dashed blue lines. The time axis runs to
// endS.
func ganttChart(g *Gantt, endS float64) (template.HTML, string, error) {
	p := newPlot("", "simulated seconds since the run started", "")
	var lanes int
	var note string
	if g.Agents <= MaxAgentLanes {
		lanes = g.Agents
		p.Add(ganttBars{g: g})
		p.Y.Tick.Marker = laneTicks(lanes, func(i int) string { return fmt.Sprintf("agent %d", i) })
		p.Y.Label.Text = "one lane per agent"
		note = fmt.Sprintf("%d agents, one lane each", g.Agents)
	} else {
		ls, binS := g.Aggregate(MaxAgentLanes, aggregateBins)
		lanes = len(ls)
		p.Add(laneBars{lanes: ls, binS: binS, endS: g.EndS})
		p.Y.Tick.Marker = laneTicks(lanes, func(i int) string { return fmt.Sprintf("agents %d–%d", ls[i].First, ls[i].Last) })
		p.Y.Label.Text = "agents, grouped"
		note = fmt.Sprintf("%d agents in %d lanes of %d; each column is the share of the lane's agents in each phase over %s", g.Agents, lanes,
			ls[0].Last-ls[0].First+1, secondsText(binS))
	}
	p.Y.Tick.Length = 0
	p.Y.Padding, p.X.Padding = 0, 0
	if err := stopLines(p, g.Stops, float64(lanes)-0.5); err != nil {
		return "", "", err
	}
	p.X.Min, p.X.Max = 0, endS
	p.Y.Min, p.Y.Max = -0.5, float64(lanes)-0.5
	h := vg.Length(lanes)*vg.Points(11) + vg.Inch
	h = max(h, 2.5*vg.Inch)
	s, err := svg(p, chartW, h)
	return s, note, err
}

// secondsText writes a duration in simulated seconds with its unit.
func secondsText(s float64) string {
	switch {
	case s >= 10:
		return fmt.Sprintf("%.0f s", s)
	case s >= 1:
		return fmt.Sprintf("%.1f s", s)
	}
	return fmt.Sprintf("%.0f ms", s*1000)
}
