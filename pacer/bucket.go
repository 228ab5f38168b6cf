package pacer

import (
	"context"
	"strconv"
	"strings"

	"golang.org/x/time/rate"

	"github.com/agentsim/agentsim/clock"
)

// bucket waits on an x/time/rate token bucket through the simulated clock: it reserves with
// the time-parameterised API (ReserveN, DelayFrom, CancelAt at clk.Now()) and sleeps on a
// clock timer, never on rate.Limiter.Wait, so --speedup scales the pacing too.
type bucket struct {
	lim *rate.Limiter
	clk *clock.Clock
}

// newBucket returns a full bucket of burst tokens refilled at perSecond tokens per simulated
// second.
func newBucket(perSecond float64, burst int, clk *clock.Clock) bucket {
	return bucket{lim: rate.NewLimiter(rate.Limit(perSecond), burst), clk: clk}
}

// tryTake takes n tokens if they are there now, without blocking or allocating.
func (b *bucket) tryTake(n int) bool { return b.lim.AllowN(b.clk.Now(), n) }

// take reserves n tokens (n ≤ burst) and waits until they are due or ctx is done. On ctx it
// cancels the reservation, which gives back the tokens not yet due, as far as later
// reservations allow (x/time/rate CancelAt); a token whose time has come is spent.
func (b *bucket) take(ctx context.Context, n int) error {
	now := b.clk.Now()
	r := b.lim.ReserveN(now, n)
	d := r.DelayFrom(now)
	if d <= 0 {
		return nil
	}
	t := b.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		r.CancelAt(b.clk.Now())
		return ctx.Err()
	}
}

// acquireTokens admits req once n tokens of b are taken, recording the wait in led if it has
// to block: the whole of Rate and TPM, as acquireSlot is for the semaphore designs.
func acquireTokens(ctx context.Context, led *ledger, b *bucket, n int, req Demand) (*Permit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.tryTake(n) {
		return led.issue(req, nil), nil
	}
	w := led.beginWait()
	if err := b.take(ctx, n); err != nil {
		led.abandon(w)
		return nil, err
	}
	return led.issue(req, w), nil
}

// formatRate prints a rate with at least one decimal: 2 → "2.0", 0.25 → "0.25".
func formatRate(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") {
		s += ".0"
	}
	return s
}
