package workloads

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// The distribution kinds, as written in the `dist:` key.
const (
	DistConst     = "const"     // always Value
	DistUniform   = "uniform"   // uniform on [Min, Max], both inclusive
	DistNormal    = "normal"    // normal(Avg, StdDev), negative samples clamped to 0
	DistExp       = "exp"       // exponential with mean Avg
	DistLognormal = "lognormal" // lognormal whose own mean and standard deviation are Avg and StdDev
)

// DistKinds lists the distribution kinds in the order messages show them.
var DistKinds = []string{DistConst, DistUniform, DistNormal, DistExp, DistLognormal}

// kindFields lists, per kind, the YAML keys besides `dist` that the kind requires.
var kindFields = map[string][]string{
	DistConst:     {"value"},
	DistUniform:   {"min", "max"},
	DistNormal:    {"mean", "stddev"},
	DistExp:       {"mean"},
	DistLognormal: {"mean", "stddev"},
}

// Dist is a distribution of token counts. Its YAML form is a bare integer (const) or a map
// such as {dist: uniform, min: 2000, max: 12000}. The zero value is const 0. Fields that do not
// apply to Kind are zero.
type Dist struct {
	// Kind is one of DistKinds; "" means const.
	Kind string
	// Value is the const value, in tokens.
	Value int
	// Min and Max bound a uniform distribution, in tokens, both inclusive.
	Min, Max int
	// Avg is the `mean` key (normal, exp, lognormal), in tokens.
	Avg int
	// StdDev is the `stddev` key (normal, lognormal), in tokens.
	StdDev int
}

// DurationDist is a distribution of simulated durations. Its YAML form is a bare Go duration
// (const, e.g. 2s) or a map such as {dist: uniform, min: 200ms, max: 2s}. The zero value is
// const 0. Fields that do not apply to Kind are zero.
type DurationDist struct {
	// Kind is one of DistKinds; "" means const.
	Kind string
	// Value is the const value.
	Value time.Duration
	// Min and Max bound a uniform distribution, both inclusive.
	Min, Max time.Duration
	// Avg is the `mean` key (normal, exp, lognormal).
	Avg time.Duration
	// StdDev is the `stddev` key (normal, lognormal).
	StdDev time.Duration
}

// Const returns the distribution that is always v tokens.
func Const(v int) Dist { return Dist{Kind: DistConst, Value: v} }

// ConstDuration returns the distribution that is always d.
func ConstDuration(d time.Duration) DurationDist { return DurationDist{Kind: DistConst, Value: d} }

// params is the kind-independent form both distribution types sample from.
type params struct {
	kind                      string
	value, min, max, mean, sd float64
}

func (d Dist) params() params {
	return params{d.Kind, float64(d.Value), float64(d.Min), float64(d.Max), float64(d.Avg), float64(d.StdDev)}
}

func (d DurationDist) params() params {
	return params{d.Kind, float64(d.Value), float64(d.Min), float64(d.Max), float64(d.Avg), float64(d.StdDev)}
}

// Sample draws one token count, ≥ 0 when the distribution is valid.
func (d Dist) Sample(r *rand.Rand) int {
	if d.Kind == DistUniform {
		if d.Max <= d.Min {
			return d.Min
		}
		return d.Min + r.IntN(d.Max-d.Min+1)
	}
	return int(math.Round(d.params().sample(r)))
}

// Sample draws one duration, ≥ 0 when the distribution is valid.
func (d DurationDist) Sample(r *rand.Rand) time.Duration {
	if d.Kind == DistUniform {
		if d.Max <= d.Min {
			return d.Min
		}
		return d.Min + time.Duration(r.Int64N(int64(d.Max-d.Min)+1))
	}
	return time.Duration(math.Round(d.params().sample(r)))
}

// least is the smallest token count Sample can return: the constant, the uniform's min, the
// mean of a normal or lognormal without spread, and 0 for any other kind, whose samples may
// round down to 0.
func (d Dist) least() int {
	switch d.Kind {
	case DistConst, "":
		return d.Value
	case DistUniform:
		return d.Min
	case DistNormal, DistLognormal:
		if d.StdDev == 0 {
			return d.Avg
		}
	}
	return 0
}

// Mean is the expected value of Sample, in tokens (normal: of the distribution clamped at 0).
func (d Dist) Mean() float64 { return d.params().expected() }

// Mean is the expected value of Sample (normal: of the distribution clamped at 0).
func (d DurationDist) Mean() time.Duration {
	return time.Duration(math.Round(d.params().expected()))
}

// String renders d in its YAML flow form, e.g. "{dist: uniform, min: 2000, max: 12000}", or
// the bare value for const; the result is accepted by --set.
func (d Dist) String() string {
	return d.params().format(func(x float64) string { return fmt.Sprint(int64(x)) })
}

// String renders d in its YAML flow form, e.g. "{dist: exp, mean: 2s}", or the bare duration
// for const; the result is accepted by --set.
func (d DurationDist) String() string {
	return d.params().format(func(x float64) string { return formatDuration(time.Duration(x)) })
}

// Validate reports whether d's kind is known and its parameters are allowed.
func (d Dist) Validate() error { return d.params().validate(d.String()) }

// Validate reports whether d's kind is known and its parameters are allowed.
func (d DurationDist) Validate() error { return d.params().validate(d.String()) }

// sample draws from every kind but uniform, which Dist.Sample and DurationDist.Sample draw
// as integers themselves so that both bounds are reachable.
func (p params) sample(r *rand.Rand) float64 {
	switch p.kind {
	case DistNormal:
		return math.Max(0, p.mean+p.sd*r.NormFloat64())
	case DistExp:
		return p.mean * r.ExpFloat64()
	case DistLognormal:
		mu, sigma := p.lognormal()
		return math.Exp(mu + sigma*r.NormFloat64())
	default:
		return p.value
	}
}

// lognormal returns the parameters of the underlying normal from the distribution's own mean
// and standard deviation: σ² = ln(1 + sd²/mean²), μ = ln(mean) − σ²/2.
func (p params) lognormal() (mu, sigma float64) {
	s2 := math.Log1p((p.sd * p.sd) / (p.mean * p.mean))
	return math.Log(p.mean) - s2/2, math.Sqrt(s2)
}

func (p params) expected() float64 {
	switch p.kind {
	case DistUniform:
		return (p.min + p.max) / 2
	case DistNormal:
		if p.sd <= 0 {
			return math.Max(0, p.mean)
		}
		// E[max(0, X)] for X ~ N(μ, σ²) is μΦ(μ/σ) + σφ(μ/σ).
		z := p.mean / p.sd
		cdf := 0.5 * math.Erfc(-z/math.Sqrt2)
		pdf := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
		return p.mean*cdf + p.sd*pdf
	case DistExp, DistLognormal:
		return p.mean
	default:
		return p.value
	}
}

func (p params) format(num func(float64) string) string {
	switch p.kind {
	case DistUniform:
		return fmt.Sprintf("{dist: uniform, min: %s, max: %s}", num(p.min), num(p.max))
	case DistNormal, DistLognormal:
		return fmt.Sprintf("{dist: %s, mean: %s, stddev: %s}", p.kind, num(p.mean), num(p.sd))
	case DistExp:
		return fmt.Sprintf("{dist: exp, mean: %s}", num(p.mean))
	case DistConst, "":
		return num(p.value)
	default:
		return fmt.Sprintf("{dist: %s}", p.kind)
	}
}

// validate returns nil or an error "<shown> is not allowed: want <what is allowed>".
func (p params) validate(shown string) error {
	var want string
	switch p.kind {
	case DistConst, "":
		if p.value < 0 {
			want = "a value of at least 0"
		}
	case DistUniform:
		if p.min < 0 || p.max < p.min {
			want = "0 ≤ min ≤ max"
		}
	case DistNormal:
		if p.mean < 0 || p.sd < 0 {
			want = "mean ≥ 0 and stddev ≥ 0"
		}
	case DistExp:
		if p.mean <= 0 {
			want = "mean > 0"
		}
	case DistLognormal:
		if p.mean <= 0 || p.sd < 0 {
			want = "mean > 0 and stddev ≥ 0"
		}
	default:
		want = "dist one of " + strings.Join(DistKinds, ", ")
	}
	if want == "" {
		return nil
	}
	return fmt.Errorf("%s is not allowed: want %s", shown, want)
}

// formatDuration is time.Duration.String without zero trailing units: 1h, 2m, 1m30s, 200ms.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
