package results

import (
	"math"
	"slices"
)

// Summary describes a distribution of durations in simulated seconds. Percentiles use the
// nearest-rank method on the exact sorted observations.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// Summarize computes the summary of xs (which it sorts in place).
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	slices.Sort(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return Summary{
		N: len(xs), Mean: sum / float64(len(xs)),
		P50: rank(xs, 0.50), P90: rank(xs, 0.90), P99: rank(xs, 0.99),
		Min: xs[0], Max: xs[len(xs)-1],
	}
}

// rank returns the nearest-rank q-quantile of sorted xs.
func rank(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
