package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart sizes, in points of the SVG (the page scales them to its width).
const (
	legendW = 1.9 * vg.Inch
	chartW  = 11 * vg.Inch
	chartH  = 2.6 * vg.Inch
	smallW  = 5.4 * vg.Inch
	smallH  = 2.4 * vg.Inch
)

// sans is the charts' typeface; the browser draws it with a local sans-serif font, nothing is
// fetched.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPlot returns a plot with the report's fonts, a grid and its labels.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Title.TextStyle.Font = sans
	p.Title.TextStyle.Font.Size = 12
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans
		a.Label.TextStyle.Font.Size = 10
		a.Tick.Label.Font = sans
		a.Tick.Label.Font.Size = 9
	}
	p.Legend.TextStyle.Font = sans
	p.Legend.TextStyle.Font.Size = 9
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.ThumbnailWidth = 14
	p.Legend.Padding = 3
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = color.Gray{Y: 225}, color.Gray{Y: 225}
	p.Add(g)
	return p
}

// plainTicks are gonum/plot's default ticks labelled without trailing zeros: "25", not "25.00".
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}

// svg draws p at w × h points and returns the <svg> element, without the XML prologue, for
// inlining into the page. The legend, if any, stands to the right of the plot, where it hides
// no data.
func svg(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	leg := p.Legend
	r := leg.Rectangle(dc)
	if lw := r.Max.X - r.Min.X; lw > 0 {
		// A strip of one width for every chart of a page, unless a legend needs more, keeps
		// the time axes of charts above each other aligned.
		lw = max(lw, legendW*w/chartW)
		p.Legend = plot.NewLegend()
		p.Draw(draw.Crop(dc, 0, -(lw + 14), 0, 0))
		leg.Top, leg.Left = true, true
		leg.Draw(draw.Crop(dc, w-lw-6, 0, 0, -24))
		p.Legend = leg
	} else {
		p.Draw(dc)
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("draw %q: %w", p.Title.Text, err)
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return template.HTML(s), nil //nolint:gosec // gonum/plot's own SVG, with escaped text
}

// runColor is the colour of the i-th run in overlays; seriesColor of the i-th series.
func runColor(i int) color.Color { return palette[i%len(palette)] }

var palette = []color.Color{
	rgb(0x4e79a7), rgb(0xe15759), rgb(0x59a14f), rgb(0xf28e2b), rgb(0xb07aa1), rgb(0x76b7b2), rgb(0x9c755f), rgb(0xedc948),
}

// runDash tells runs apart in charts where colour tells series apart.
func runDash(i int) []vg.Length {
	return [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}[i%4]
}

func rgb(v uint32) color.RGBA {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// xys turns a series into plotter points, dropping non-finite values.
func xys(s Series) plotter.XYs {
	pts := make(plotter.XYs, 0, len(s.X))
	for i := range s.X {
		if !math.IsNaN(s.Y[i]) && !math.IsInf(s.Y[i], 0) {
			pts = append(pts, plotter.XY{X: s.X[i], Y: s.Y[i]})
		}
	}
	return pts
}

// line adds s to p as a line in colour c with dashes d, named in the legend.
func line(p *plot.Plot, s Series, name string, c color.Color, d []vg.Length) error {
	pts := xys(s)
	if len(pts) == 0 {
		return nil
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("line %s: %w", name, err)
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(1.3), d
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

// stopLines marks the stops of a run on p as vertical dashed lines from y 0 to top.
func stopLines(p *plot.Plot, stops []Stop, top float64) error {
	for _, s := range stops {
		l, err := plotter.NewLine(plotter.XYs{{X: s.TS, Y: 0}, {X: s.TS, Y: top}})
		if err != nil {
			return err
		}
		l.Color, l.Width, l.Dashes = stopColor, vg.Points(1.5), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
	}
	return nil
}

var stopColor = rgb(0x1f4fb4)
