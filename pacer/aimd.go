package pacer

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// AIMD is an adaptive concurrency limit after Netflix's AIMDLimit: +1 on a success while at
// least half the limit is in flight, ×BackoffRatio on a timeout, an error or a success slower
// than LatencyTarget, clamped to [MinLimit, MaxLimit]. Waiters queue first come first served.
// Its known failures: it oscillates, it needs timeouts to see stalls at all, and the limit only
// moves when requests end.
type AIMD struct {
	led    ledger
	sem    semaphore
	params aimdParams
}

var _ Pacer = (*AIMD)(nil)

// aimdParams are the fixed parameters of the AIMD rule.
type aimdParams struct {
	min, max int
	ratio    float64       // backoff ratio in (0, 1)
	target   time.Duration // latency over which a success counts as congestion; 0 = never
}

func newAIMD(cfg Config, clk *clock.Clock) *AIMD {
	a := &AIMD{params: aimdParams{
		min: cfg.MinLimit, max: cfg.MaxLimit, ratio: cfg.BackoffRatio, target: cfg.LatencyTarget,
	}}
	a.sem = semaphore{limit: cfg.InitialLimit, adapt: a.adapt}
	a.led = newLedger(cfg, clk, a.sem.release)
	return a
}

func (a *AIMD) adapt(o Outcome, inflight, limit int) int {
	return aimdNext(a.params, limit, inflight, o)
}

// aimdNext is the AIMD decision: the limit after a request ends with o while inflight
// requests (this one included) were held. Cancelled requests carry no signal.
func aimdNext(p aimdParams, limit, inflight int, o Outcome) int {
	switch {
	case o.Kind == events.RequestCancelled:
		return limit
	case o.Kind == events.RequestTimeout || o.Kind == events.RequestError || (p.target > 0 && o.Latency > p.target):
		// Floor like Netflix's (int) cast; the epsilon keeps 20×0.9 at 18, not 17.
		limit = int(math.Floor(float64(limit)*p.ratio + 1e-9))
	case inflight*2 >= limit:
		limit++
	}
	return min(max(limit, p.min), p.max)
}

// Acquire waits until fewer than the current limit are in flight.
func (a *AIMD) Acquire(ctx context.Context, req Demand) (*Permit, error) {
	return acquireSlot(ctx, &a.led, &a.sem, req)
}

// String returns e.g. "AIMD{limit 20 [1..200] ×0.9}", with ", target 5s" when a latency
// target is set.
func (a *AIMD) String() string {
	target := ""
	if a.params.target > 0 {
		target = ", target " + a.params.target.String()
	}
	return fmt.Sprintf("AIMD{limit %d [%d..%d] ×%v%s%s}", a.sem.currentLimit(),
		a.params.min, a.params.max, a.params.ratio, target, a.led.suffix())
}

// Stats returns a snapshot; Limit is the current adaptive limit.
func (a *AIMD) Stats() Stats { return semStats(&a.led, &a.sem) }
