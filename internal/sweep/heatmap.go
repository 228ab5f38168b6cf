package sweep

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/agentsim/agentsim/results"
)

// HTMLFile is the sweep's page: the verdict heatmap and the table.
const HTMLFile = "summary.html"

// verdictColors colour the heatmap's columns, each cell shaded by its share of the runs:
// greens for the verdicts that exit 0, warm colours for stuck work.
var verdictColors = map[results.VerdictKind]color.RGBA{
	results.Healthy:          {R: 0x59, G: 0xa1, B: 0x4f, A: 255},
	results.Slow:             {R: 0x8c, G: 0xb3, B: 0x4a, A: 255},
	results.ServerSerialized: {R: 0xb0, G: 0x7a, B: 0xa1, A: 255},
	results.StalledStreams:   {R: 0xf2, G: 0x8e, B: 0x2b, A: 255},
	results.PacerStarvation:  {R: 0xe1, G: 0x57, B: 0x59, A: 255},
	results.Deadlock:         {R: 0x9c, G: 0x1c, B: 0x1f, A: 255},
	results.Errors:           {R: 0x76, G: 0x76, B: 0x76, A: 255},
}

// heatCells draws the heatmap: a row per cell, a column per verdict kind, each square shaded
// from white to the verdict's colour by the share of the cell's finished runs with it.
type heatCells struct {
	s     *Summary
	kinds []results.VerdictKind
}

// Plot implements plot.Plotter.
func (h heatCells) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	n := len(h.s.Cells)
	for i, cell := range h.s.Cells {
		y := float64(n - 1 - i)
		for j, k := range h.kinds {
			share := 0.0
			if cell.Finished > 0 {
				share = float64(cell.Verdicts[k]) / float64(cell.Finished)
			}
			x0, x1, y0, y1 := tx(float64(j)-0.48), tx(float64(j)+0.48), ty(y-0.45), ty(y+0.45)
			c.FillPolygon(shade(verdictColors[k], share), []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
			if cell.Verdicts[k] > 0 {
				ink := color.Color(color.Black)
				if share > 0.5 {
					ink = color.White
				}
				sty := draw.TextStyle{Color: ink, Font: font.From(sansFont, 9), Handler: plot.DefaultTextHandler,
					XAlign: draw.XCenter, YAlign: draw.YCenter}
				c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, fmt.Sprintf("%d/%d", cell.Verdicts[k], cell.Runs))
			}
		}
	}
}

// DataRange implements plot.DataRanger.
func (h heatCells) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(len(h.kinds)) - 0.5, -0.5, float64(len(h.s.Cells)) - 0.5
}

var sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// shade mixes white with c by share (0 white, 1 c).
func shade(c color.RGBA, share float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(255 - share*(255-float64(v))) }
	return color.RGBA{R: mix(c.R), G: mix(c.G), B: mix(c.B), A: 255}
}

// heatmapSVG draws the heatmap as an <svg> element.
func heatmapSVG(s *Summary) (template.HTML, error) {
	// The columns are the verdicts some run had, in the order of the verdict rules; healthy
	// and slow always, so that a sweep without a stuck run reads as such.
	var kinds []results.VerdictKind
	for _, k := range results.VerdictKinds {
		if k == results.Healthy || k == results.Slow || slices.ContainsFunc(s.Cells, func(c Cell) bool { return c.Verdicts[k] > 0 }) {
			kinds = append(kinds, k)
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("verdicts per cell across %d seeds", s.Seeds)
	p.Title.TextStyle.Font = font.From(sansFont, 12)
	p.X.Tick.Marker = plot.TickerFunc(func(_, _ float64) []plot.Tick {
		ts := make([]plot.Tick, len(kinds))
		for j, k := range kinds {
			ts[j] = plot.Tick{Value: float64(j), Label: string(k)}
		}
		return ts
	})
	n := len(s.Cells)
	p.Y.Tick.Marker = plot.TickerFunc(func(_, _ float64) []plot.Tick {
		ts := make([]plot.Tick, n)
		for i, c := range s.Cells {
			ts[i] = plot.Tick{Value: float64(n - 1 - i), Label: s.CellName(c)}
		}
		return ts
	})
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Tick.Label.Font = font.From(sansFont, 9)
	}
	p.Add(heatCells{s: s, kinds: kinds})
	w, h := vg.Length(4+1.1*float64(len(kinds)))*vg.Inch, vg.Length(1.2+0.32*float64(n))*vg.Inch
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("draw the sweep heatmap: %w", err)
	}
	out := b.String()
	if i := strings.Index(out, "<svg"); i >= 0 {
		out = out[i:]
	}
	return template.HTML(out), nil //nolint:gosec // gonum/plot's own SVG, with escaped text
}

var page = template.Must(template.New("sweep").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>agentsim sweep: {{.Workload}}</title>
<style>body{font-family:sans-serif;margin:2em}svg{max-width:100%;height:auto}pre{font-size:13px}</style></head>
<body><h1>agentsim sweep: {{.Workload}}</h1>
{{.Heatmap}}
<pre>{{.Table}}</pre>
</body></html>
`))

// WriteHTML writes the sweep's self-contained page: the verdict heatmap (drawn with
// gonum/plot, as the run report's charts are) and the table.
func WriteHTML(w io.Writer, s *Summary) error {
	svg, err := heatmapSVG(s)
	if err != nil {
		return err
	}
	var table strings.Builder
	if err := WriteTable(&table, s); err != nil {
		return err
	}
	return page.Execute(w, struct {
		Workload string
		Heatmap  template.HTML
		Table    string
	}{s.Workload, svg, table.String()})
}
