package pacer

import (
	"context"
	"fmt"

	"github.com/agentsim/agentsim/clock"
)

// Rate is an x/time/rate token bucket: Burst requests at once, then one per 1/RPS simulated
// seconds; concurrency is unbounded. Its known failure: none by itself, but it hides server
// overload, since requests keep being sent however slowly they complete.
type Rate struct {
	led    ledger
	bucket bucket
	rps    float64
	burst  int
}

var _ Pacer = (*Rate)(nil)

func newRate(cfg Config, clk *clock.Clock) *Rate {
	return &Rate{
		led:    newLedger(cfg, clk, nil),
		bucket: newBucket(cfg.RPS, cfg.Burst, clk),
		rps:    cfg.RPS,
		burst:  cfg.Burst,
	}
}

// Acquire waits for one token.
func (r *Rate) Acquire(ctx context.Context, req Demand) (*Permit, error) {
	return acquireTokens(ctx, &r.led, &r.bucket, 1, req)
}

// String returns e.g. "Rate{2.0 rps, burst 4}".
func (r *Rate) String() string {
	return fmt.Sprintf("Rate{%s rps, burst %d%s}", formatRate(r.rps), r.burst, r.led.suffix())
}

// Stats returns a snapshot; Limit is 0 (concurrency is unbounded).
func (r *Rate) Stats() Stats { return r.led.stats(0) }
