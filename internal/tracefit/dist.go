// Package tracefit fits a parametric workload to a trace: agents, rounds, initial and read
// tokens, output tokens and think time, and for an agent's tool loop its tools and tasks
// (tools.go), each distribution chosen among the workload's kinds (const, uniform, normal,
// exp, lognormal; a small count's own distribution too) by the smallest Kolmogorov–Smirnov
// distance to the data, and printed beside the data's quantiles. See docs/trace.md.
package tracefit

import (
	"math"

	"github.com/agentsim/agentsim/workloads"
)

// Fit is one distribution fitted to data: its kind and parameters in the data's unit (tokens
// or seconds), and its Kolmogorov–Smirnov distance to the data (0: a perfect fit, 1: none).
type Fit struct {
	Kind            string
	Value, Min, Max float64 // const; uniform
	Mean, StdDev    float64 // normal, exp, lognormal (the distribution's own mean and sd)
	// Values and Shares are a mixture's: the data's distinct values, ascending, and the share
	// of the data at each (see counts).
	Values, Shares []float64
	KS             float64
}

// maxCountValues is the most distinct values a count may have for its data's own
// distribution to be a candidate (a mixture of one const per value).
const maxCountValues = 12

// countCandidates fits every kind to sorted xs, whole numbers of calls or steps, and adds
// their own distribution when they take few values: small counts (1.2 calls a step) lose
// their shape to a rounded mean or standard deviation.
func countCandidates(xs []float64) []Fit {
	fs := candidates(xs)
	f := Fit{Kind: workloads.DistMixture}
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			f.Values, f.Shares = append(f.Values, x), append(f.Shares, 0)
		}
		f.Shares[len(f.Shares)-1] += 1 / float64(len(xs))
	}
	if len(f.Values) > maxCountValues {
		return fs
	}
	f.KS = ks(xs, f)
	return append(fs, f)
}

// candidates fits every kind to sorted xs by its moments or range.
func candidates(xs []float64) []Fit {
	mean, sd := moments(xs)
	med := quantile(xs, 0.5)
	fs := []Fit{
		{Kind: workloads.DistConst, Value: med},
		{Kind: workloads.DistUniform, Min: xs[0], Max: xs[len(xs)-1]},
		{Kind: workloads.DistNormal, Mean: mean, StdDev: sd},
		{Kind: workloads.DistExp, Mean: mean},
		{Kind: workloads.DistLognormal, Mean: mean, StdDev: sd},
	}
	for i := range fs {
		fs[i].KS = ks(xs, fs[i])
	}
	return fs
}

// best returns the fit of smallest KS distance among fs that keep pass.
func best(fs []Fit, keep func(Fit) bool) Fit {
	var b Fit
	b.KS = math.Inf(1)
	for _, f := range fs {
		if keep(f) && f.KS < b.KS {
			b = f
		}
	}
	return b
}

// moments returns the mean and the standard deviation of xs.
func moments(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)))
}

// ks is the Kolmogorov–Smirnov distance between sorted xs and f: the largest gap between
// the empirical distribution function and f's.
func ks(xs []float64, f Fit) float64 {
	n := float64(len(xs))
	d, first := 0.0, 0 // first: index of x's first occurrence
	for i, x := range xs {
		if i+1 < len(xs) && xs[i+1] == x {
			continue // the empirical function steps once per distinct value
		}
		d = max(d, math.Abs(f.CDF(x)-float64(i+1)/n), math.Abs(f.cdfBelow(x)-float64(first)/n))
		first = i + 1
	}
	return d
}

// CDF is P(X ≤ x) of the fitted distribution (a normal's negative samples clamp to 0).
func (f Fit) CDF(x float64) float64 {
	switch f.Kind {
	case workloads.DistMixture:
		p := 0.0
		for i, v := range f.Values {
			if v <= x {
				p += f.Shares[i]
			}
		}
		return math.Min(p, 1)
	case workloads.DistConst:
		if x >= f.Value {
			return 1
		}
		return 0
	case workloads.DistUniform:
		if f.Max <= f.Min {
			return step(x >= f.Min)
		}
		return math.Min(1, math.Max(0, (x-f.Min)/(f.Max-f.Min)))
	case workloads.DistNormal:
		if x < 0 {
			return 0
		}
		if f.StdDev == 0 {
			return step(x >= f.Mean)
		}
		return phi((x - f.Mean) / f.StdDev)
	case workloads.DistExp:
		if x < 0 || f.Mean <= 0 {
			return step(x >= 0)
		}
		return 1 - math.Exp(-x/f.Mean)
	case workloads.DistLognormal:
		if x <= 0 || f.Mean <= 0 {
			return 0
		}
		mu, sigma := f.lognormal()
		if sigma == 0 {
			return step(x >= f.Mean)
		}
		return phi((math.Log(x) - mu) / sigma)
	}
	return 0
}

// cdfBelow is P(X < x): CDF without the atom at x (a const's, a normal's clamped zero).
func (f Fit) cdfBelow(x float64) float64 {
	switch {
	case f.Kind == workloads.DistConst:
		return step(x > f.Value)
	case f.Kind == workloads.DistMixture:
		p := 0.0
		for i, v := range f.Values {
			if v < x {
				p += f.Shares[i]
			}
		}
		return math.Min(p, 1)
	case f.Kind == workloads.DistNormal && x == 0:
		return 0
	}
	return f.CDF(x)
}

// Quantile is the fitted distribution's q-quantile.
func (f Fit) Quantile(q float64) float64 {
	switch f.Kind {
	case workloads.DistMixture:
		p := 0.0
		for i, v := range f.Values {
			if p += f.Shares[i]; p >= q-1e-12 {
				return v
			}
		}
		return f.Values[len(f.Values)-1]
	case workloads.DistConst:
		return f.Value
	case workloads.DistUniform:
		return f.Min + q*(f.Max-f.Min)
	case workloads.DistNormal:
		return math.Max(0, f.Mean+f.StdDev*probit(q))
	case workloads.DistExp:
		return -f.Mean * math.Log1p(-q)
	case workloads.DistLognormal:
		mu, sigma := f.lognormal()
		return math.Exp(mu + sigma*probit(q))
	}
	return 0
}

// lognormal returns the underlying normal's parameters from the distribution's own mean and
// standard deviation, as the workload samples them.
func (f Fit) lognormal() (mu, sigma float64) {
	s2 := math.Log1p((f.StdDev * f.StdDev) / (f.Mean * f.Mean))
	return math.Log(f.Mean) - s2/2, math.Sqrt(s2)
}

// least is the smallest value a sample may round to: a forced output length must never be 0.
func (f Fit) least() float64 {
	switch f.Kind {
	case workloads.DistConst:
		return f.Value
	case workloads.DistUniform:
		return f.Min
	case workloads.DistMixture:
		return f.Values[0]
	}
	return 0
}

func phi(z float64) float64    { return 0.5 * math.Erfc(-z/math.Sqrt2) }
func probit(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

func step(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// quantile is the nearest-rank q-quantile of sorted xs.
func quantile(xs []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}
