package workloads

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
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
	DistMixture   = "mixture"   // one of Parts, picked in proportion to its weight, then sampled
)

// DistKinds lists the distribution kinds in the order messages show them.
var DistKinds = []string{DistConst, DistUniform, DistNormal, DistExp, DistLognormal, DistMixture}

// kindFields lists, per kind, the YAML keys besides `dist` that the kind requires.
var kindFields = map[string][]string{
	DistConst:     {"value"},
	DistUniform:   {"min", "max"},
	DistNormal:    {"mean", "stddev"},
	DistExp:       {"mean"},
	DistLognormal: {"mean", "stddev"},
	DistMixture:   {"parts"},
}

// Dist is a distribution of token counts. Its YAML form is a bare integer (const) or a map
// such as {dist: uniform, min: 2000, max: 12000}, or for a mixture {dist: mixture, parts:
// [{weight: 0.9, dist: const, value: 1}, {weight: 0.1, dist: uniform, min: 2, max: 4}]}. The
// zero value is const 0. Fields that do not apply to Kind are zero.
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
	// Parts are a mixture's components, none of them a mixture itself; nil for any other kind.
	Parts []Part
}

// Part is one component of a token mixture.
type Part struct {
	// Weight is the part's share of the samples, relative to the other parts' weights; > 0.
	Weight float64
	// Dist is the part's distribution, of any kind but mixture.
	Dist
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
	// Parts are a mixture's components, none of them a mixture itself; nil for any other kind.
	Parts []DurationPart
}

// DurationPart is one component of a duration mixture.
type DurationPart struct {
	// Weight is the part's share of the samples, relative to the other parts' weights; > 0.
	Weight float64
	// DurationDist is the part's distribution, of any kind but mixture.
	DurationDist
}

// Const returns the distribution that is always v tokens.
func Const(v int) Dist { return Dist{Kind: DistConst, Value: v} }

// ConstDuration returns the distribution that is always d.
func ConstDuration(d time.Duration) DurationDist { return DurationDist{Kind: DistConst, Value: d} }

// params is the kind-independent form both distribution types sample from.
type params struct {
	kind                      string
	value, min, max, mean, sd float64
	weights                   []float64 // a mixture's, one per part
	parts                     []params
}

func (d Dist) params() params {
	p := params{kind: d.Kind, value: float64(d.Value), min: float64(d.Min), max: float64(d.Max),
		mean: float64(d.Avg), sd: float64(d.StdDev)}
	for _, part := range d.Parts {
		p.weights = append(p.weights, part.Weight)
		p.parts = append(p.parts, part.params())
	}
	return p
}

func (d DurationDist) params() params {
	p := params{kind: d.Kind, value: float64(d.Value), min: float64(d.Min), max: float64(d.Max),
		mean: float64(d.Avg), sd: float64(d.StdDev)}
	for _, part := range d.Parts {
		p.weights = append(p.weights, part.Weight)
		p.parts = append(p.parts, part.params())
	}
	return p
}

// Sample draws one token count, ≥ 0 when the distribution is valid.
func (d Dist) Sample(r *rand.Rand) int {
	switch d.Kind {
	case DistUniform:
		if d.Max <= d.Min {
			return d.Min
		}
		return d.Min + r.IntN(d.Max-d.Min+1)
	case DistMixture:
		if len(d.Parts) == 0 {
			return 0
		}
		return d.Parts[pick(r, d.Parts)].Sample(r)
	}
	return int(min(math.Round(d.params().sample(r)), maxSample))
}

// Sample draws one duration, ≥ 0 when the distribution is valid.
func (d DurationDist) Sample(r *rand.Rand) time.Duration {
	switch d.Kind {
	case DistUniform:
		if d.Max <= d.Min {
			return d.Min
		}
		return d.Min + time.Duration(r.Int64N(int64(d.Max-d.Min)+1))
	case DistMixture:
		if len(d.Parts) == 0 {
			return 0
		}
		return d.Parts[pick(r, d.Parts)].Sample(r)
	}
	return time.Duration(min(math.Round(d.params().sample(r)), maxSample))
}

// maxSample bounds a sample (146 years, or as many tokens): a heavy tail may pass what an
// int64 holds, and a float64 beyond it converts to no defined integer.
const maxSample = 1 << 62

// pick returns the index of one of parts (at least one), drawn in proportion to their weights
// (all > 0).
func pick[P interface{ weight() float64 }](r *rand.Rand, parts []P) int {
	total := 0.0
	for _, p := range parts {
		total += p.weight()
	}
	u := r.Float64() * total
	for i, p := range parts {
		if u < p.weight() {
			return i
		}
		u -= p.weight()
	}
	return len(parts) - 1
}

func (p Part) weight() float64         { return p.Weight }
func (p DurationPart) weight() float64 { return p.Weight }

// least is the smallest token count Sample can return: the constant, the uniform's min, the
// mean of a normal or lognormal without spread, the least of a mixture's parts, and 0 for any
// other kind, whose samples may round down to 0.
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
	case DistMixture:
		if len(d.Parts) == 0 {
			return 0
		}
		least := math.MaxInt
		for _, p := range d.Parts {
			least = min(least, p.least())
		}
		return least
	}
	return 0
}

// Mean is the expected value of Sample, in tokens (normal: of the distribution clamped at 0;
// mixture: the parts' means weighted).
func (d Dist) Mean() float64 { return d.params().expected() }

// Mean is the expected value of Sample (normal: of the distribution clamped at 0; mixture: the
// parts' means weighted).
func (d DurationDist) Mean() time.Duration {
	return time.Duration(math.Round(d.params().expected()))
}

// String renders d in its YAML flow form, e.g. "{dist: uniform, min: 2000, max: 12000}", or
// the bare value for const; the result is accepted by --set.
func (d Dist) String() string { return d.params().format(tokenText) }

// String renders d in its YAML flow form, e.g. "{dist: exp, mean: 2s}", or the bare duration
// for const; the result is accepted by --set.
func (d DurationDist) String() string { return d.params().format(durationText) }

// tokenText and durationText render one parameter of a token or duration distribution.
func tokenText(x float64) string    { return fmt.Sprint(int64(x)) }
func durationText(x float64) string { return formatDuration(time.Duration(x)) }

// Validate reports whether d's kind is known and its parameters are allowed. A problem in
// one part of a mixture is a *PartError.
func (d Dist) Validate() error { return d.params().validate(tokenText) }

// Validate reports whether d's kind is known and its parameters are allowed. A problem in
// one part of a mixture is a *PartError.
func (d DurationDist) Validate() error { return d.params().validate(durationText) }

// PartError is a problem in one part of a mixture.
type PartError struct {
	// Index is the part's position in the mixture's parts, from 0.
	Index int
	// Err says what is wrong with the part and what is allowed.
	Err error
}

// Error is "parts[<index>]: <what is wrong>".
func (e *PartError) Error() string { return fmt.Sprintf("parts[%d]: %v", e.Index, e.Err) }

// Unwrap returns Err.
func (e *PartError) Unwrap() error { return e.Err }

// sample draws from every kind but uniform, which Dist.Sample and DurationDist.Sample draw
// as integers themselves so that both bounds are reachable, and mixture, whose parts they
// sample themselves.
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
	case DistMixture:
		sum, total := 0.0, 0.0
		for i, part := range p.parts {
			sum += p.weights[i] * part.expected()
			total += p.weights[i]
		}
		if total <= 0 {
			return 0
		}
		return sum / total
	default:
		return p.value
	}
}

func (p params) format(num func(float64) string) string {
	switch p.kind {
	case DistMixture:
		parts := make([]string, len(p.parts))
		for i, part := range p.parts {
			parts[i] = part.formatPart(p.weights[i], num)
		}
		return fmt.Sprintf("{dist: mixture, parts: [%s]}", strings.Join(parts, ", "))
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

// formatPart renders p as one part of a mixture: "{weight: 0.9, dist: const, value: 1}".
func (p params) formatPart(weight float64, num func(float64) string) string {
	inner := p.format(num)
	if p.kind == DistConst || p.kind == "" {
		inner = "{dist: const, value: " + inner + "}"
	}
	return "{weight: " + strconv.FormatFloat(weight, 'g', -1, 64) + ", " + strings.TrimPrefix(inner, "{")
}

// validate returns nil or an error "<p as num renders it> is not allowed: want <what is
// allowed>", a *PartError for a part of a mixture.
func (p params) validate(num func(float64) string) error {
	if p.kind == DistMixture {
		return p.validateMixture(num)
	}
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
	return fmt.Errorf("%s is not allowed: want %s", p.format(num), want)
}

// validateMixture checks that a mixture has parts, each with a weight > 0 and a valid
// distribution of another kind.
func (p params) validateMixture(num func(float64) string) error {
	if len(p.parts) == 0 {
		return fmt.Errorf("%s is not allowed: want at least one part", p.format(num))
	}
	total := 0.0
	for i, part := range p.parts {
		w := p.weights[i]
		shown := part.formatPart(w, num)
		switch {
		case !(w > 0) || math.IsInf(w, 1):
			return &PartError{i, fmt.Errorf("%s is not allowed: want a weight > 0", shown)}
		case part.kind == DistMixture:
			return &PartError{i, fmt.Errorf("%s is not allowed: want a part of another kind than mixture", shown)}
		}
		if err := part.validate(num); err != nil {
			return &PartError{i, err}
		}
		total += w
	}
	if math.IsInf(total, 1) {
		return fmt.Errorf("%s is not allowed: want weights whose sum is a finite number", p.format(num))
	}
	return nil
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
