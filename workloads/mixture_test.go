package workloads

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// counts is a discrete mixture: 1 call in 88 % of draws, 2 to 4 in the rest.
var counts = Dist{Kind: DistMixture, Parts: []Part{
	{Weight: 0.88, Dist: Const(1)},
	{Weight: 0.12, Dist: Dist{Kind: DistUniform, Min: 2, Max: 4}},
}}

// TestMixtureSample checks that a mixture draws each part in proportion to its weight, that
// Mean weights the parts' means, and that least is the least of the parts.
func TestMixtureSample(t *testing.T) {
	const n = 100_000
	r := rand.New(rand.NewPCG(5, 6))
	ones, sum := 0, 0
	for range n {
		x := counts.Sample(r)
		if x < 1 || x > 4 {
			t.Fatalf("%v.Sample() = %d; want within [1, 4]", counts, x)
		}
		if x == 1 {
			ones++
		}
		sum += x
	}
	assert.InDelta(t, 0.88, float64(ones)/n, 0.005, "share of the const part")
	assert.InDelta(t, 0.88+0.12*3, counts.Mean(), 1e-9, "Mean()")
	assert.InDelta(t, counts.Mean(), float64(sum)/n, 0.01, "sample mean")
	assert.Equal(t, 1, counts.least())
	// Weights are relative: 22 and 3 draw as 0.88 and 0.12 do.
	scaled := Dist{Kind: DistMixture, Parts: []Part{{Weight: 22, Dist: Const(1)}, {Weight: 3, Dist: counts.Parts[1].Dist}}}
	assert.InDelta(t, counts.Mean(), scaled.Mean(), 1e-9, "Mean() with weights 22 and 3")
}

// TestMixtureDuration checks a duration mixture's samples and mean.
func TestMixtureDuration(t *testing.T) {
	d := DurationDist{Kind: DistMixture, Parts: []DurationPart{
		{Weight: 3, DurationDist: ConstDuration(time.Second)},
		{Weight: 1, DurationDist: DurationDist{Kind: DistExp, Avg: time.Minute}},
	}}
	assert.Equal(t, 15750*time.Millisecond, d.Mean(), "(3 × 1s + 1 × 60s) / 4")
	r := rand.New(rand.NewPCG(1, 1))
	var sum time.Duration
	const n = 100_000
	for range n {
		x := d.Sample(r)
		if x < 0 {
			t.Fatalf("%v.Sample() = %v; want ≥ 0", d, x)
		}
		sum += x
	}
	assert.InDelta(t, float64(d.Mean()), float64(sum/n), 0.02*float64(d.Mean()), "sample mean")
}

// TestMixtureForms checks the flow form a mixture renders to, that --set and a YAML file
// read it back, and that MarshalYAML writes it as one flow map.
func TestMixtureForms(t *testing.T) {
	const flow = "{dist: mixture, parts: [{weight: 0.88, dist: const, value: 1}, {weight: 0.12, dist: uniform, min: 2, max: 4}]}"
	assert.Equal(t, flow, counts.String())
	got, err := parseDist("k", flow)
	require.NoError(t, err)
	assert.Equal(t, counts, got, "parseDist(String())")

	d := DurationDist{Kind: DistMixture, Parts: []DurationPart{
		{Weight: 0.9875, DurationDist: DurationDist{Kind: DistLognormal, Avg: 17 * time.Second, StdDev: 1000 * time.Second}},
		{Weight: 0.0125, DurationDist: DurationDist{Kind: DistLognormal, Avg: 75 * time.Second, StdDev: 20 * time.Second}},
	}}
	assert.Equal(t, "{dist: mixture, parts: [{weight: 0.9875, dist: lognormal, mean: 17s, stddev: 16m40s}, "+
		"{weight: 0.0125, dist: lognormal, mean: 1m15s, stddev: 20s}]}", d.String())
	back, err := parseDurationDist("k", d.String())
	require.NoError(t, err)
	assert.Equal(t, d, back)

	type doc struct {
		D Dist         `yaml:"d"`
		T DurationDist `yaml:"t"`
	}
	b, err := yaml.Marshal(doc{counts, d})
	require.NoError(t, err)
	assert.Contains(t, string(b), "d: "+flow+"\n")
	var out doc
	require.NoError(t, yaml.Unmarshal(b, &out), "yaml:\n%s", b)
	assert.Equal(t, doc{counts, d}, out, "yaml:\n%s", b)
}

// TestParseMixtureErrors covers the shape errors of a mixture, each naming the part's key.
func TestParseMixtureErrors(t *testing.T) {
	tests := []struct{ raw, want string }{
		// parts is a list.
		{"{dist: mixture, parts: 3}", `k.parts: 3 is not allowed: want a list of parts such as [{weight: 0.9, dist: const, value: 1}, …]`},
		{"{dist: mixture}", `k.parts: missing: a mixture dist takes parts`},
		// Each part is a map with a weight and a dist.
		{"{dist: mixture, parts: [1]}", `k.parts[0]: 1 is not allowed: want a map of a weight and a distribution, such as {weight: 0.9, dist: const, value: 1}`},
		{"{dist: mixture, parts: [{dist: const, value: 1}]}", `k.parts[0].weight: missing: each part of a mixture takes a weight beside its dist`},
		{"{dist: mixture, parts: [{weight: heavy, dist: const, value: 1}]}", `k.parts[0].weight: "heavy" is not allowed: want a number`},
		{"{dist: mixture, parts: [{weight: 1, value: 1}]}", `k.parts[0].dist: missing: want one of const, uniform, normal, exp, lognormal, mixture`},
		// A part's own keys are checked as any distribution's.
		{"{dist: mixture, parts: [{weight: 1, dist: const, value: 1}, {weight: 1, dist: exp, mean: 2, max: 3}]}",
			`unknown key "k.parts[1].max": a exp dist takes mean`},
	}
	for _, tt := range tests {
		_, err := parseDist("k", tt.raw)
		if err == nil || err.Error() != tt.want {
			t.Errorf("parseDist(k, %q) error = %v; want %q", tt.raw, err, tt.want)
		}
	}
}

// TestValidateMixture checks that a mixture needs parts, each with a weight > 0 and a valid
// distribution of another kind, and that a bad part is a *PartError naming it.
func TestValidateMixture(t *testing.T) {
	tests := []struct {
		d    Dist
		part int // -1: the mixture as a whole
		want string
	}{
		{Dist{Kind: DistMixture}, -1, "{dist: mixture, parts: []} is not allowed: want at least one part"},
		{Dist{Kind: DistMixture, Parts: []Part{{Weight: 1, Dist: Const(1)}, {Weight: 0, Dist: Const(2)}}}, 1,
			"parts[1]: {weight: 0, dist: const, value: 2} is not allowed: want a weight > 0"},
		{Dist{Kind: DistMixture, Parts: []Part{{Weight: 1e308, Dist: Const(1)}, {Weight: 1e308, Dist: Const(2)}}}, -1,
			"{dist: mixture, parts: [{weight: 1e+308, dist: const, value: 1}, {weight: 1e+308, dist: const, value: 2}]} is not allowed: " +
				"want weights whose sum is a finite number"},
		{Dist{Kind: DistMixture, Parts: []Part{{Weight: 1, Dist: Dist{Kind: DistExp}}}}, 0,
			"parts[0]: {dist: exp, mean: 0} is not allowed: want mean > 0"},
		{Dist{Kind: DistMixture, Parts: []Part{{Weight: 1, Dist: counts}}}, 0,
			"parts[0]: {weight: 1, dist: mixture, parts: [{weight: 0.88, dist: const, value: 1}, {weight: 0.12, dist: uniform, min: 2, max: 4}]} " +
				"is not allowed: want a part of another kind than mixture"},
	}
	for _, tt := range tests {
		err := tt.d.Validate()
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v.Validate() = %v; want %q", tt.d, err, tt.want)
			continue
		}
		var pe *PartError
		if got := errors.As(err, &pe); got != (tt.part >= 0) || got && pe.Index != tt.part {
			t.Errorf("%v.Validate() = %#v; want a *PartError for part %d", tt.d, err, tt.part)
		}
	}
	if err := counts.Validate(); err != nil {
		t.Errorf("%v.Validate() = %v; want nil", counts, err)
	}
}
