package gate

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// statKind is which statistic of a distribution a figure is.
type statKind int

const (
	statQuantile statKind = iota // nearest rank, as results.Summarize
	statMean
	statMax
	statSum
)

// stat is one statistic of a distribution of observations.
type stat struct {
	kind statKind
	q    float64 // the quantile, for statQuantile
}

// of computes the statistic of sorted xs weighted by counts (how many times each appears in a
// resample; nil: once each, total n = len(xs)). Quantiles use the nearest-rank method on the
// n weighted observations, as results.Summarize does on the exact ones.
func (s stat) of(sorted []float64, counts []int32) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	weight := func(i int) int {
		if counts == nil {
			return 1
		}
		return int(counts[i])
	}
	switch s.kind {
	case statMean:
		sum := 0.0
		for i, x := range sorted {
			sum += float64(weight(i)) * x
		}
		return sum / float64(n)
	case statSum:
		sum := 0.0
		for i, x := range sorted {
			sum += float64(weight(i)) * x
		}
		return sum
	case statMax:
		for i := n - 1; i > 0; i-- {
			if weight(i) > 0 {
				return sorted[i]
			}
		}
		return sorted[0]
	}
	rank := max(1, min(n, int(math.Ceil(s.q*float64(n)))))
	seen := 0
	for i, x := range sorted {
		if seen += weight(i); seen >= rank {
			return x
		}
	}
	return sorted[n-1]
}

// Bootstrap settings: Resamples draws, cut down for long series so that a comparison of two
// runs of 100,000 requests still takes about a second (never below MinResamples); the
// interval is the central Confidence of the resampled changes.
const (
	Resamples    = 2000
	MinResamples = 200
	Confidence   = 0.95
	// resampleBudget bounds resamples × observations per series.
	resampleBudget = 20_000_000
)

// bootstrapSeed seeds every resampling, so that the same two runs always give the same
// intervals.
const bootstrapSeed = 0x61676e7473696d // "agntsim"

// resampler draws bootstrap resamples of one sorted series.
type resampler struct {
	sorted []float64
	counts []int32
	rng    *rand.Rand
}

func newResampler(xs []float64, name string) *resampler {
	h := fnv.New64a()
	h.Write([]byte(name))
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	return &resampler{sorted: sorted, counts: make([]int32, len(sorted)),
		rng: rand.New(rand.NewPCG(bootstrapSeed, h.Sum64()))}
}

// next draws one resample (n observations with replacement) as counts over the sorted series.
func (r *resampler) next() []int32 {
	clear(r.counts)
	n := len(r.sorted)
	for range n {
		r.counts[r.rng.IntN(n)]++
	}
	return r.counts
}

// resamples is how many resamples a comparison of series of n and m observations draws.
func resamples(n, m int) int {
	return max(MinResamples, min(Resamples, resampleBudget/max(1, n, m)))
}

// relativeCI returns the Confidence interval of new.stat ÷ base.stat − 1 from independent
// bootstrap resamples of both series, by the percentile method, and whether there is one:
// each side needs at least two observations and a resampled base statistic must not be 0.
func relativeCI(base, new []float64, s stat, name string) (lo, hi float64, ok bool) {
	if len(base) < 2 || len(new) < 2 {
		return 0, 0, false
	}
	rb, rn := newResampler(base, "base "+name), newResampler(new, "new "+name)
	b := resamples(len(base), len(new))
	changes := make([]float64, 0, b)
	for range b {
		sb := s.of(rb.sorted, rb.next())
		sn := s.of(rn.sorted, rn.next())
		if sb == 0 {
			return 0, 0, false
		}
		changes = append(changes, sn/sb-1)
	}
	slices.Sort(changes)
	tail := (1 - Confidence) / 2
	return percentile(changes, tail), percentile(changes, 1-tail), true
}

// percentile is the nearest-rank q-quantile of sorted xs.
func percentile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
