package pacer

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// Gradient2 constants, as Netflix's Gradient2Limit defaults.
const (
	gradientSmoothing  = 0.2 // weight of a new limit estimate
	gradientLongWindow = 600 // samples in the long-RTT exponential average
	gradientWarmup     = 10  // samples averaged plainly before the exponential average starts
)

// Gradient is Netflix's Gradient2 adaptive concurrency limit: it compares a smoothed long-term
// RTT with each request's RTT, gradient = clamp(Tolerance·long/short, 0.5, 1), and moves the
// limit towards limit·gradient + √limit with smoothing 0.2, within [MinLimit, MaxLimit].
// Timeouts and errors count only through their latency, as in Gradient2. Its known failure:
// the limit only moves when requests complete, so with 300 s generations it reacts minutes
// late.
type Gradient struct {
	led ledger
	sem semaphore
	g   gradient2 // guarded by sem.mu (updated from sem.adapt)
}

var _ Pacer = (*Gradient)(nil)

func newGradient(cfg Config, clk *clock.Clock) *Gradient {
	g := &Gradient{g: gradient2{
		limit: float64(cfg.InitialLimit), min: float64(cfg.MinLimit), max: float64(cfg.MaxLimit),
		tolerance: cfg.Tolerance,
	}}
	g.sem = semaphore{limit: cfg.InitialLimit, adapt: g.adapt}
	g.led = newLedger(cfg, clk, g.sem.release)
	return g
}

func (g *Gradient) adapt(o Outcome, inflight, limit int) int {
	if o.Kind == events.RequestCancelled {
		return limit
	}
	g.g = g.g.next(o.Latency, inflight)
	return g.g.effective()
}

// gradient2 is the Gradient2 state; next is pure.
type gradient2 struct {
	limit     float64 // estimated limit, fractional
	min, max  float64
	tolerance float64
	long      expAvg // long-term RTT, seconds
}

// effective is the integer limit the semaphore enforces.
func (g gradient2) effective() int { return max(int(g.limit), 1) }

// next returns the state after a request with round-trip time rtt ends while inflight
// requests (this one included) were held. A non-positive rtt is no sample.
func (g gradient2) next(rtt time.Duration, inflight int) gradient2 {
	short := rtt.Seconds()
	if short <= 0 {
		return g
	}
	queue := math.Sqrt(g.limit)
	g.long = g.long.add(short)
	long := g.long.value
	if long/short > 2 {
		// Latency is back to normal after a long overload: let the long RTT catch up faster.
		g.long = g.long.scale(0.95)
	}
	if float64(inflight) < g.limit/2 {
		return g // application-limited: no evidence about the limit
	}
	gradient := min(max(g.tolerance*long/short, 0.5), 1)
	estimate := g.limit*gradient + queue
	g.limit = min(max(g.limit*(1-gradientSmoothing)+estimate*gradientSmoothing, g.min), g.max)
	return g
}

// expAvg is Netflix's ExpAvgMeasurement: a plain mean over the first gradientWarmup samples,
// then an exponential average with factor 2/(gradientLongWindow+1).
type expAvg struct {
	value, sum float64
	count      int
}

func (e expAvg) add(x float64) expAvg {
	if e.count < gradientWarmup {
		e.count++
		e.sum += x
		e.value = e.sum / float64(e.count)
		return e
	}
	f := 2.0 / (gradientLongWindow + 1)
	e.value = e.value*(1-f) + x*f
	return e
}

func (e expAvg) scale(k float64) expAvg {
	e.value *= k
	e.sum *= k
	return e
}

// Acquire waits until fewer than the current limit are in flight.
func (g *Gradient) Acquire(ctx context.Context, req Demand) (*Permit, error) {
	return acquireSlot(ctx, &g.led, &g.sem, req)
}

// String returns e.g. "Gradient2{limit 20 [20..200], tolerance 1.5}".
func (g *Gradient) String() string {
	g.sem.mu.Lock()
	s := g.g
	g.sem.mu.Unlock()
	return fmt.Sprintf("Gradient2{limit %d [%v..%v], tolerance %v%s}",
		s.effective(), s.min, s.max, s.tolerance, g.led.suffix())
}

// Stats returns a snapshot; Limit is the current adaptive limit.
func (g *Gradient) Stats() Stats { return semStats(&g.led, &g.sem) }
