package report

import (
	"fmt"
	"html/template"
	"image/color"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/agentsim/agentsim/results"
)

// Curve is a bench sweep's throughput curve, read from its results.json: per concurrency, the
// aggregate output rate of the steady decode phase and each request's own rate.
type Curve struct {
	// Label names the sweep in legends: its directory as given.
	Label string
	// MaxTokens is the output length of every request, in tokens.
	MaxTokens int
	// Points are the sweep's tests, in the order run.
	Points []results.SweepPoint
}

// Curves reads the throughput curve of each directory that is a bench sweep (its
// results.json lists the tests of a --sweep); other directories have none. A directory
// without a readable results.json has none either: Load says what is wrong with it.
func Curves(dirs ...string) []*Curve {
	var out []*Curve
	for _, d := range dirs {
		res, err := results.Read(d)
		if err != nil || res.Bench == nil || len(res.Bench.Sweep) == 0 {
			continue
		}
		out = append(out, &Curve{Label: filepath.Clean(d), MaxTokens: res.Bench.MaxTokens, Points: res.Bench.Sweep})
	}
	return out
}

// curveChart draws the sweeps' curves on one chart: output tokens per simulated second
// against requests at once, the aggregate rate solid and the per-request rate dashed, a
// colour per sweep, each test a dot.
func curveChart(curves []*Curve) (template.HTML, error) {
	p := newPlot("Throughput against concurrency (aggregate: steady decode phase)", "requests at once", "output tok/s (simulated)")
	for i, c := range curves {
		agg, per := Series{}, Series{}
		for _, sp := range c.Points {
			agg.X, agg.Y = append(agg.X, float64(sp.Concurrency)), append(agg.Y, sp.OutputTokPerS)
			per.X, per.Y = append(per.X, float64(sp.Concurrency)), append(per.Y, sp.PerRequestTokPerS)
		}
		name := c.Label
		if len(curves) == 1 {
			name = ""
		}
		for _, s := range []struct {
			series Series
			what   string
			dashes []vg.Length
		}{{agg, "aggregate", nil}, {per, "per request", []vg.Length{vg.Points(5), vg.Points(3)}}} {
			if err := line(p, s.series, legendName(name, s.what), runColor(i), s.dashes); err != nil {
				return "", err
			}
			if err := dots(p, s.series, runColor(i)); err != nil {
				return "", err
			}
		}
	}
	p.Y.Min = 0
	return svg(p, chartW, chartH)
}

// legendName is a curve's line in the legend: what it shows, after whose it is.
func legendName(label, what string) string {
	if label == "" {
		return what
	}
	return label + ": " + what
}

// dots marks each point of s on p in colour c.
func dots(p *plot.Plot, s Series, c color.Color) error {
	sc, err := plotter.NewScatter(xys(s))
	if err != nil {
		return fmt.Errorf("points: %w", err)
	}
	sc.GlyphStyle.Color, sc.GlyphStyle.Radius, sc.GlyphStyle.Shape = c, vg.Points(2.5), draw.CircleGlyph{}
	p.Add(sc)
	return nil
}

// curveNote describes the curves under their chart.
func curveNote(curves []*Curve) string {
	return fmt.Sprintf("%d-token outputs; aggregate = output tok/s while ≥ 90 %% of the peak streams decoded at once; per request = each request's output tokens over its decode time; times simulated", curves[0].MaxTokens)
}
