package pacer

import (
	"context"
	"fmt"

	"github.com/agentsim/agentsim/clock"
)

// SlotsRate takes a slot first, then a token, as the incident's harness did. Its known
// failures: starvation as Slots, plus a burst after recovery (tokens pile up while every slot
// is held).
type SlotsRate struct {
	led    ledger
	sem    semaphore
	bucket bucket
	rps    float64
	burst  int
}

var _ Pacer = (*SlotsRate)(nil)

func newSlotsRate(cfg Config, clk *clock.Clock) *SlotsRate {
	s := &SlotsRate{
		sem:    semaphore{limit: cfg.Slots},
		bucket: newBucket(cfg.RPS, cfg.Burst, clk),
		rps:    cfg.RPS,
		burst:  cfg.Burst,
	}
	s.led = newLedger(cfg, clk, s.sem.release)
	return s
}

// Acquire waits for a slot, then for a token; if ctx ends during the token wait, the slot is
// given back before returning.
func (s *SlotsRate) Acquire(ctx context.Context, req Demand) (*Permit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var w *linkTime // one wait spans both stages, started at the first that blocks
	if !s.sem.tryAcquire() {
		w = s.led.beginWait()
		if err := s.sem.acquire(ctx); err != nil {
			s.led.abandon(w)
			return nil, err
		}
	}
	if s.bucket.tryTake(1) {
		return s.led.issue(req, w), nil
	}
	if w == nil {
		w = s.led.beginWait()
	}
	if err := s.bucket.take(ctx, 1); err != nil {
		s.sem.giveBack()
		s.led.abandon(w)
		return nil, err
	}
	return s.led.issue(req, w), nil
}

// String returns e.g. "SlotsRate{30 slots, 2.0 rps, burst 4}".
func (s *SlotsRate) String() string {
	return fmt.Sprintf("SlotsRate{%d slots, %s rps, burst %d%s}",
		s.sem.limit, formatRate(s.rps), s.burst, s.led.suffix())
}

// Stats returns a snapshot; Limit is the number of slots.
func (s *SlotsRate) Stats() Stats { return semStats(&s.led, &s.sem) }
