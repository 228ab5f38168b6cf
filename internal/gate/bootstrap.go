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
// runs of 100,000 requests still takes seconds (never below MinResamples); the
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

// resampler draws bootstrap resamples of one sorted series. A resample is kept as counts over
// the sorted series rather than as a new slice to sort: every statistic of it is then one walk
// up the series, which is what keeps long runs fast, and needs nothing beyond the standard
// library.
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

// bootstrap is the resampled statistics of one series in both runs: base[i][b] and new[i][b]
// are stats[i] of resample b; nil when a run has fewer than two observations.
type bootstrap struct {
	stats     []stat
	base, new [][]float64
}

// newBootstrap resamples base and new independently, each resample giving every statistic of
// stats at once.
func newBootstrap(name string, base, new []float64, stats []stat) *bootstrap {
	bs := &bootstrap{stats: stats}
	if len(base) < 2 || len(new) < 2 {
		return bs
	}
	b := resamples(len(base), len(new))
	bs.base = resampleStats(newResampler(base, "base "+name), stats, b)
	bs.new = resampleStats(newResampler(new, "new "+name), stats, b)
	return bs
}

// resampleStats draws b resamples from r and computes each statistic of each.
func resampleStats(r *resampler, stats []stat, b int) [][]float64 {
	out := make([][]float64, len(stats))
	for i := range out {
		out[i] = make([]float64, b)
	}
	vals := make([]float64, len(stats))
	for j := range b {
		statsOf(r.sorted, r.next(), stats, vals)
		for i, v := range vals {
			out[i][j] = v
		}
	}
	return out
}

// statsOf computes every statistic of stats on sorted weighted by counts in one pass, into
// out; it gives what stat.of gives for each.
func statsOf(sorted []float64, counts []int32, stats []stat, out []float64) {
	n := len(sorted)
	// The quantiles' ranks, lowest first: one walk up the sorted series meets each in turn.
	type target struct{ rank, k int }
	var targets []target
	for k, s := range stats {
		if s.kind == statQuantile {
			targets = append(targets, target{max(1, min(n, int(math.Ceil(s.q*float64(n))))), k})
		}
	}
	slices.SortFunc(targets, func(a, b target) int { return a.rank - b.rank })
	// No branch on a zero count: a third of them are zero, at random, and mispredicted.
	sum, seen, next := 0.0, 0, 0
	for i, x := range sorted {
		c := int(counts[i])
		sum += float64(c) * x
		seen += c
		for next < len(targets) && targets[next].rank <= seen {
			out[targets[next].k] = x
			next++
		}
	}
	last := n - 1
	for last > 0 && counts[last] == 0 {
		last--
	}
	for k, s := range stats {
		switch s.kind {
		case statMean:
			out[k] = sum / float64(n)
		case statSum:
			out[k] = sum
		case statMax:
			out[k] = sorted[last]
		}
	}
}

// relativeCI returns the Confidence interval of new.s ÷ base.s − 1 over the resamples, by the
// percentile method, and whether there is one: both runs need two observations, and no
// resampled base statistic may be 0.
func (bs *bootstrap) relativeCI(s stat) (lo, hi float64, ok bool) {
	i := slices.Index(bs.stats, s)
	if bs.base == nil || i < 0 {
		return 0, 0, false
	}
	changes := make([]float64, len(bs.base[i]))
	for j, sb := range bs.base[i] {
		if sb == 0 {
			return 0, 0, false
		}
		changes[j] = bs.new[i][j]/sb - 1
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
