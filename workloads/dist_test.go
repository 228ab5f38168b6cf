package workloads

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/viper"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// moments returns the mean and standard deviation of xs.
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

// TestDistSampleStatistics draws 100 000 samples with a fixed seed and checks the bounds and
// the first two moments of each kind.
func TestDistSampleStatistics(t *testing.T) {
	const n = 100_000
	tests := []struct {
		d        Dist
		lo, hi   int     // every sample within [lo, hi]
		mean, sd float64 // expected moments
	}{
		// const never varies.
		{Const(5000), 5000, 5000, 5000, 0},
		// uniform on integers, both ends inclusive: sd = sqrt(((max−min+1)² − 1)/12).
		{Dist{Kind: DistUniform, Min: 2000, Max: 12000}, 2000, 12000, 7000, math.Sqrt((10001.0*10001 - 1) / 12)},
		// normal far from 0 is not clamped.
		{Dist{Kind: DistNormal, Avg: 3000, StdDev: 500}, 0, math.MaxInt, 3000, 500},
		// exp: sd equals the mean.
		{Dist{Kind: DistExp, Avg: 1000}, 0, math.MaxInt, 1000, 1000},
		// lognormal: mean and sd are those of the distribution itself.
		{Dist{Kind: DistLognormal, Avg: 4000, StdDev: 1500}, 1, math.MaxInt, 4000, 1500},
	}
	for _, tt := range tests {
		r := rand.New(rand.NewPCG(1, 2))
		xs := make([]float64, n)
		for i := range xs {
			x := tt.d.Sample(r)
			if x < tt.lo || x > tt.hi {
				t.Fatalf("%v.Sample() = %d; want within [%d, %d]", tt.d, x, tt.lo, tt.hi)
			}
			xs[i] = float64(x)
		}
		mean, sd := moments(xs)
		assert.InDelta(t, tt.mean, mean, 0.02*tt.mean+0.5, "%v: sample mean", tt.d)
		assert.InDelta(t, tt.sd, sd, 0.03*tt.sd+0.5, "%v: sample stddev", tt.d)
		assert.InDelta(t, tt.mean, tt.d.Mean(), 0.5, "%v.Mean()", tt.d)
	}
}

// TestNormalClampedAtZero checks that a normal with much mass below 0 yields zeros, never
// negatives, and that Mean accounts for the clamp.
func TestNormalClampedAtZero(t *testing.T) {
	d := DurationDist{Kind: DistNormal, Avg: 100 * time.Millisecond, StdDev: 200 * time.Millisecond}
	r := rand.New(rand.NewPCG(7, 7))
	const n = 100_000
	zeros, xs := 0, make([]float64, n)
	for i := range xs {
		x := d.Sample(r)
		if x < 0 {
			t.Fatalf("%v.Sample() = %v; want ≥ 0", d, x)
		}
		if x == 0 {
			zeros++
		}
		xs[i] = float64(x)
	}
	// P(X < 0) = Φ(−0.5) ≈ 0.3085.
	assert.InDelta(t, 0.3085, float64(zeros)/n, 0.01, "fraction clamped to 0")
	// E[max(0, X)] = μΦ(μ/σ) + σφ(μ/σ) ≈ 0.1 s·0.6915 + 0.2 s·0.3521 ≈ 139.6 ms.
	assert.InDelta(t, float64(139600*time.Microsecond), float64(d.Mean()), float64(200*time.Microsecond))
	mean, _ := moments(xs)
	assert.InDelta(t, float64(d.Mean()), mean, 0.02*float64(d.Mean()), "sample mean")
}

// TestDurationDistSampleStatistics checks bounds and means of duration distributions.
func TestDurationDistSampleStatistics(t *testing.T) {
	const n = 100_000
	tests := []struct {
		d      DurationDist
		lo, hi time.Duration
		mean   time.Duration
	}{
		{ConstDuration(2 * time.Second), 2 * time.Second, 2 * time.Second, 2 * time.Second},
		{DurationDist{Kind: DistUniform, Min: 200 * time.Millisecond, Max: 2 * time.Second}, 200 * time.Millisecond, 2 * time.Second, 1100 * time.Millisecond},
		{DurationDist{Kind: DistExp, Avg: 2 * time.Second}, 0, math.MaxInt64, 2 * time.Second},
		{DurationDist{Kind: DistLognormal, Avg: time.Second, StdDev: 3 * time.Second}, 1, math.MaxInt64, time.Second},
	}
	for _, tt := range tests {
		r := rand.New(rand.NewPCG(3, 4))
		xs := make([]float64, n)
		for i := range xs {
			x := tt.d.Sample(r)
			if x < tt.lo || x > tt.hi {
				t.Fatalf("%v.Sample() = %v; want within [%v, %v]", tt.d, x, tt.lo, tt.hi)
			}
			xs[i] = float64(x)
		}
		mean, _ := moments(xs)
		// A heavy-tailed lognormal (sd = 3 × mean) converges slowly: allow 5 %.
		assert.InDelta(t, float64(tt.mean), mean, 0.05*float64(tt.mean), "%v: sample mean", tt.d)
		assert.Equal(t, tt.mean, tt.d.Mean(), "%v.Mean()", tt.d)
	}
}

// TestSampleDeterministic checks that equal seeds give equal sequences.
func TestSampleDeterministic(t *testing.T) {
	d := Dist{Kind: DistLognormal, Avg: 4000, StdDev: 1500}
	a, b := rand.New(rand.NewPCG(9, 9)), rand.New(rand.NewPCG(9, 9))
	for i := range 1000 {
		if x, y := d.Sample(a), d.Sample(b); x != y {
			t.Fatalf("sample %d: %d != %d with the same seed", i, x, y)
		}
	}
}

// TestDistString checks the flow form every kind renders to.
func TestDistString(t *testing.T) {
	tests := []struct {
		d    interface{ String() string }
		want string
	}{
		{Const(128), "128"},
		{Dist{}, "0"},
		{Dist{Kind: DistUniform, Min: 2000, Max: 12000}, "{dist: uniform, min: 2000, max: 12000}"},
		{Dist{Kind: DistNormal, Avg: 3000, StdDev: 500}, "{dist: normal, mean: 3000, stddev: 500}"},
		{Dist{Kind: DistLognormal, Avg: 3000, StdDev: 500}, "{dist: lognormal, mean: 3000, stddev: 500}"},
		{Dist{Kind: "gauss"}, "{dist: gauss}"},
		{ConstDuration(90 * time.Second), "1m30s"},
		{ConstDuration(time.Hour), "1h"},
		{DurationDist{Kind: DistUniform, Min: 200 * time.Millisecond, Max: 2 * time.Second}, "{dist: uniform, min: 200ms, max: 2s}"},
		{DurationDist{Kind: DistExp, Avg: 2 * time.Minute}, "{dist: exp, mean: 2m}"},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("%#v.String() = %q; want %q", tt.d, got, tt.want)
		}
	}
}

// TestParseDist covers every accepted YAML form and the shape errors of each.
func TestParseDist(t *testing.T) {
	tests := []struct {
		raw     any
		want    Dist
		wantErr string
	}{
		// A bare number or numeric string is const.
		{5000, Const(5000), ""},
		{"5000", Const(5000), ""},
		{float64(64), Const(64), ""},
		// A map, or a string holding a flow map as --set and the environment give it.
		{map[string]any{"dist": "uniform", "min": 1, "max": 2}, Dist{Kind: DistUniform, Min: 1, Max: 2}, ""},
		{"{dist: exp, mean: 300}", Dist{Kind: DistExp, Avg: 300}, ""},
		{map[string]any{"DIST": "const", "Value": 7}, Const(7), ""},
		// Errors name the key and what is allowed.
		{"lots", Dist{}, `k: "lots" is not allowed: want an integer, or a map such as {dist: exp, mean: …}`},
		{"{dist: exp, mean: [}", Dist{}, `k: "{dist: exp, mean: [}" is not allowed: want a map such as {dist: uniform, min: 1, max: 2}`},
		{map[string]any{"dist": 3}, Dist{}, `k.dist: 3 is not allowed: want one of const, uniform, normal, exp, lognormal, mixture`},
		{map[string]any{"dist": "exp", "mean": 1.5}, Dist{}, `k.mean: 1.5 is not allowed: want an integer`},
		{map[string]any{"dist": "const"}, Dist{}, `k.value: missing: a const dist takes value`},
	}
	for _, tt := range tests {
		got, err := parseDist("k", tt.raw)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("parseDist(k, %#v) error = %v; want %q", tt.raw, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseDist(k, %#v) = %v, %v; want %v, nil", tt.raw, got, err, tt.want)
		}
	}
}

// TestParseDurationDist covers duration forms: Go syntax, and 0 as the only bare number.
func TestParseDurationDist(t *testing.T) {
	tests := []struct {
		raw     any
		want    DurationDist
		wantErr string
	}{
		{"2s", ConstDuration(2 * time.Second), ""},
		{0, ConstDuration(0), ""},
		{"{dist: uniform, min: 200ms, max: 2s}", DurationDist{Kind: DistUniform, Min: 200 * time.Millisecond, Max: 2 * time.Second}, ""},
		{map[string]any{"dist": "lognormal", "mean": "1s", "stddev": "500ms"}, DurationDist{Kind: DistLognormal, Avg: time.Second, StdDev: 500 * time.Millisecond}, ""},
		{2, DurationDist{}, `k: 2 is not allowed: want a duration such as 200ms, 90s or 5m, or a map such as {dist: exp, mean: …}`},
		{map[string]any{"dist": "exp", "mean": "2 s"}, DurationDist{}, `k.mean: "2 s" is not allowed: want a duration such as 200ms, 90s or 5m`},
	}
	for _, tt := range tests {
		got, err := parseDurationDist("k", tt.raw)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("parseDurationDist(k, %#v) error = %v; want %q", tt.raw, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseDurationDist(k, %#v) = %v, %v; want %v, nil", tt.raw, got, err, tt.want)
		}
	}
}

// TestDistYAMLRoundTrip checks that MarshalYAML and UnmarshalYAML agree for every kind.
func TestDistYAMLRoundTrip(t *testing.T) {
	type doc struct {
		D []Dist         `yaml:"d"`
		T []DurationDist `yaml:"t"`
	}
	in := doc{
		D: []Dist{Const(3), {Kind: DistUniform, Min: 1, Max: 9}, {Kind: DistNormal, Avg: 5, StdDev: 2}, {Kind: DistExp, Avg: 4}, {Kind: DistLognormal, Avg: 6, StdDev: 3}},
		T: []DurationDist{ConstDuration(time.Hour), {Kind: DistUniform, Min: time.Millisecond, Max: time.Minute}, {Kind: DistExp, Avg: 2 * time.Second}},
	}
	b, err := yaml.Marshal(in)
	require.NoError(t, err)
	var out doc
	require.NoError(t, yaml.Unmarshal(b, &out), "yaml:\n%s", b)
	assert.Equal(t, in, out, "yaml:\n%s", b)
	assert.Contains(t, string(b), "{dist: uniform, min: 1ms, max: 1m}")
}

// TestDecodeHookRawValues checks that viper's UnmarshalExact with DecodeHook decodes raw,
// untyped input — strings as --set gives them and maps as a YAML file gives them.
func TestDecodeHookRawValues(t *testing.T) {
	var out struct {
		D Dist          `mapstructure:"d"`
		T DurationDist  `mapstructure:"t"`
		X time.Duration `mapstructure:"x"`
	}
	v := viper.New()
	v.Set("d", map[string]any{"dist": "uniform", "min": 10, "max": 20})
	v.Set("t", "{dist: exp, mean: 2s}")
	v.Set("x", "90s")
	require.NoError(t, v.UnmarshalExact(&out, viper.DecodeHook(DecodeHook())))
	assert.Equal(t, Dist{Kind: DistUniform, Min: 10, Max: 20}, out.D)
	assert.Equal(t, DurationDist{Kind: DistExp, Avg: 2 * time.Second}, out.T)
	assert.Equal(t, 90*time.Second, out.X)
}
