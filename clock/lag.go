package clock

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// Lag measures scheduling lag: how much later than due, in simulated time, the waits made
// through a Clock ended — a Sleep returning, a Timer or Ticker tick being handled (see
// Clock.Fired). At speedup 1000 a millisecond of wall lag is a simulated second, so lag tells
// when the process running the simulation, not the system simulated, sets the pace.
//
// Observations go into a fixed log-linear histogram (8 buckets per power of two of
// microseconds, so a quantile is exact to within 12.5 %) with atomic counters: recording is
// lock-free and allocates nothing. The zero value is ready to use; a Lag is safe for
// concurrent use.
type Lag struct {
	counts [lagBuckets]atomic.Uint64
	n      atomic.Uint64
	max    atomic.Int64 // nanoseconds, simulated
	recent atomic.Int64 // the largest lag since the last TakeRecentMax, nanoseconds
}

// lagSub is the number of buckets per power of two (a power of two itself).
const (
	lagSubBits = 3
	lagSub     = 1 << lagSubBits
	// lagBuckets covers every non-negative int64 number of microseconds.
	lagBuckets = lagSub + (63-lagSubBits)*lagSub
)

// lagBucket returns the bucket of a lag of us microseconds: values below lagSub have a bucket
// each; above, each power of two is split into lagSub equal buckets.
func lagBucket(us uint64) int {
	if us < lagSub {
		return int(us)
	}
	e := bits.Len64(us) - 1 // us is in [2^e, 2^(e+1))
	sub := (us >> (e - lagSubBits)) & (lagSub - 1)
	return lagSub + (e-lagSubBits)*lagSub + int(sub)
}

// lagUpper returns the exclusive upper bound of bucket b, in microseconds.
func lagUpper(b int) uint64 {
	if b < lagSub {
		return uint64(b) + 1
	}
	e := (b-lagSub)/lagSub + lagSubBits
	sub := uint64((b - lagSub) % lagSub)
	return (lagSub + sub + 1) << (e - lagSubBits)
}

// Record adds one observation of lag d (simulated); a negative d counts as 0.
func (l *Lag) Record(d time.Duration) {
	d = max(d, 0)
	l.counts[lagBucket(uint64(d/time.Microsecond))].Add(1)
	l.n.Add(1)
	raise(&l.max, int64(d))
	raise(&l.recent, int64(d))
}

// Raise reports a delay d (simulated) that is not a wait but distorts the run as lag does —
// a state change the harness made (a permit taken, a request opened) that went unrecorded for
// d because its goroutine was not running. It raises the recent maximum TakeRecentMax
// returns, so a sample taken meanwhile knows how far its view and the events may disagree,
// and adds nothing to the distribution of waits. On a nil Lag (a clock not made by
// Clock.Measured) it does nothing.
func (l *Lag) Raise(d time.Duration) {
	if l != nil {
		raise(&l.recent, int64(d))
	}
}

// raise sets v to x when x is larger.
func raise(v *atomic.Int64, x int64) {
	for {
		old := v.Load()
		if x <= old || v.CompareAndSwap(old, x) {
			return
		}
	}
}

// TakeRecentMax returns the largest lag recorded since the previous call (or since the
// start), and starts a new period.
func (l *Lag) TakeRecentMax() time.Duration {
	return time.Duration(l.recent.Swap(0))
}

// RecentMax returns the largest lag recorded since the previous TakeRecentMax (or since the
// start) without starting a new period.
func (l *Lag) RecentMax() time.Duration { return time.Duration(l.recent.Load()) }

// LagStats summarises the lags recorded so far, in simulated time. P50 and P99 are the upper
// bounds of the histogram buckets holding those quantiles, capped at Max, so they err high by
// at most 12.5 % (or 1 µs); Max is exact.
type LagStats struct {
	N             int64
	P50, P99, Max time.Duration
}

// Stats summarises the lags recorded so far. It may run concurrently with Record; the
// figures are then those of some moment during the call.
func (l *Lag) Stats() LagStats {
	var counts [lagBuckets]uint64
	var n uint64
	for i := range counts {
		counts[i] = l.counts[i].Load()
		n += counts[i]
	}
	s := LagStats{N: int64(n), Max: time.Duration(l.max.Load())}
	if n == 0 {
		return s
	}
	s.P50 = min(quantile(&counts, n, 0.50), s.Max)
	s.P99 = min(quantile(&counts, n, 0.99), s.Max)
	return s
}

// quantile returns the upper bound of the bucket holding the q-quantile of n observations.
func quantile(counts *[lagBuckets]uint64, n uint64, q float64) time.Duration {
	rank := uint64(q*float64(n-1)) + 1 // 1-based rank of the quantile
	var seen uint64
	for b, c := range counts {
		if seen += c; seen >= rank {
			return time.Duration(lagUpper(b)) * time.Microsecond
		}
	}
	return math.MaxInt64 // unreachable: the counts add up to n
}

// LagWindow reads a Lag over successive windows: each Next summarises only the observations
// recorded since the previous one. It is for one reader; the Lag goes on being shared.
type LagWindow struct {
	l    *Lag
	prev [lagBuckets]uint64
}

// Window returns a LagWindow whose first window starts now.
func (l *Lag) Window() *LagWindow {
	w := &LagWindow{l: l}
	for i := range w.prev {
		w.prev[i] = l.counts[i].Load()
	}
	return w
}

// Next summarises the observations recorded since the previous call (or since Window), and
// starts a new window. P50 and P99 are bucket upper bounds as in Stats; Max is the upper bound
// of the highest bucket observed in the window (it errs high by at most 12.5 %).
func (w *LagWindow) Next() LagStats {
	var counts [lagBuckets]uint64
	var n uint64
	top := -1
	for i := range counts {
		c := w.l.counts[i].Load()
		counts[i], w.prev[i] = c-w.prev[i], c
		n += counts[i]
		if counts[i] > 0 {
			top = i
		}
	}
	if n == 0 {
		return LagStats{}
	}
	return LagStats{N: int64(n), P50: quantile(&counts, n, 0.50), P99: quantile(&counts, n, 0.99),
		Max: time.Duration(lagUpper(top)) * time.Microsecond}
}
