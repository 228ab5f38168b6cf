package gate

import (
	"fmt"
	"math"
	"slices"

	"github.com/agentsim/agentsim/results"
)

// Measurement is one run as a gate sees it: its results and the per-request observations
// they were computed from.
type Measurement struct {
	// Results is the run's results.json (or what its events support).
	Results *results.Results
	// Observations are the per-request values its latency statistics and output rate were
	// computed from; comparisons resample them.
	Observations results.Observations
}

// Change is how a figure moved from a baseline run to a new one.
type Change struct {
	// Figure is what changed.
	Figure Figure
	// Base and New are the figure's values in the two runs, in its Unit.
	Base, New float64
	// Relative is New ÷ Base − 1 (a fraction: 0.12 is +12 %); NaN when Base is 0.
	Relative float64
	// HasCI is set when the figure is resampled and both runs have enough observations;
	// Low and High then bound the Relative change at the Confidence level (fractions:
	// 0.08 is +8 %).
	HasCI     bool
	Low, High float64
}

// Significant reports whether the change is more than noise: its confidence interval
// excludes 0. Without an interval any difference counts.
func (c Change) Significant() bool {
	if c.HasCI {
		return c.Low > 0 || c.High < 0
	}
	return c.New != c.Base
}

// Comparison compares two runs figure by figure. It resamples each series of per-request
// observations once, for all the figures that are statistics of it, and keeps the resamples:
// the figures of one comparison share them. It is not safe for concurrent use.
type Comparison struct {
	// Base is the baseline run, New the run held to it.
	Base, New *Measurement
	boots     map[string]*bootstrap // by series name
}

// NewComparison compares new with base.
func NewComparison(base, new *Measurement) *Comparison {
	return &Comparison{Base: base, New: new, boots: map[string]*bootstrap{}}
}

// Compare returns the change of f from base to new (see Comparison.Change).
func Compare(f Figure, base, new *Measurement) Change { return NewComparison(base, new).Change(f) }

// Change returns the change of f from the base run to the new one.
func (cmp *Comparison) Change(f Figure) Change {
	base, new := cmp.Base, cmp.New
	c := Change{Figure: f, Base: f.Value(base.Results), New: f.Value(new.Results), Relative: math.NaN()}
	if c.Base != 0 {
		c.Relative = c.New/c.Base - 1
	}
	if !f.Resampled() {
		return c
	}
	bs, ns := f.series(&base.Observations), f.series(&new.Observations)
	c.Low, c.High, c.HasCI = cmp.bootstrap(f, bs, ns).relativeCI(f.stat)
	// A figure that is its statistic times a factor of the run (the output rate: tokens over
	// the run's duration) keeps that factor's ratio: k = (New ÷ stat(new)) ÷ (Base ÷ stat(base)).
	sb, sn := f.stat.of(sorted(bs), nil), f.stat.of(sorted(ns), nil)
	if c.HasCI && sb != 0 && sn != 0 && c.Base != 0 {
		k := (c.New / sn) / (c.Base / sb)
		c.Low, c.High = (1+c.Low)*k-1, (1+c.High)*k-1
	}
	return c
}

// String describes the change as diff prints it: "+12 % (95 % CI +8 … +16 %)", "no
// significant change (95 % CI −3 … +4 %)", "+3", "no change".
func (c Change) String() string {
	ci := ""
	if c.HasCI {
		ci = fmt.Sprintf(" (%g %% CI %s … %s)", Confidence*100, signedPercent(c.Low), signedPercent(c.High))
	}
	switch {
	case c.HasCI && !c.Significant():
		return "no significant change" + ci
	case c.New == c.Base:
		return "no change"
	case math.IsNaN(c.Relative):
		return signed(c.Figure.Unit, c.New-c.Base)
	}
	return signedPercent(c.Relative) + ci
}

// signedPercent prints a relative change as "+12 %", "−3.5 %".
func signedPercent(r float64) string {
	p := r * 100
	digits := 0
	if math.Abs(p) < 10 {
		digits = 1
	}
	s := trimFloat(math.Abs(p), digits)
	switch {
	case s == "0":
		return "0 %"
	case p < 0:
		return "−" + s + " %"
	}
	return "+" + s + " %"
}

// signed prints an absolute difference with its sign and unit: "+3", "−1.2 s".
func signed(u Unit, d float64) string {
	if d < 0 {
		return "−" + u.Format(-d)
	}
	return "+" + u.Format(d)
}

// bootstrap returns the resamples of f's series, drawing them on first use for every
// resampled figure of that series.
func (cmp *Comparison) bootstrap(f Figure, bs, ns []float64) *bootstrap {
	if b, ok := cmp.boots[f.seriesName]; ok {
		return b
	}
	var stats []stat
	for _, g := range figures {
		if g.seriesName == f.seriesName && g.Resampled() {
			stats = append(stats, g.stat)
		}
	}
	b := newBootstrap(f.seriesName, bs, ns, stats)
	cmp.boots[f.seriesName] = b
	return b
}

func sorted(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}
