package pacer

import (
	"context"
	"fmt"

	"github.com/agentsim/agentsim/clock"
)

// TPM is a token-per-minute budget: a token bucket of TokensPerMinute tokens refilled at
// TokensPerMinute/60 per simulated second, from which each request reserves PromptTokens +
// ExpectedOutputTokens up front. Its known failure: reservations are never refunded, so
// stalled or short requests keep their budget spent.
type TPM struct {
	led    ledger
	bucket bucket
	budget int
}

var _ Pacer = (*TPM)(nil)

func newTPM(cfg Config, clk *clock.Clock) *TPM {
	return &TPM{
		led:    newLedger(cfg, clk, nil),
		bucket: newBucket(float64(cfg.TokensPerMinute)/60, cfg.TokensPerMinute, clk),
		budget: cfg.TokensPerMinute,
	}
}

// tpmCost is the number of tokens a request reserves.
func tpmCost(req Demand) int { return max(req.PromptTokens, 0) + max(req.ExpectedOutputTokens, 0) }

// tpmCheck rejects a cost that no amount of waiting could admit.
func tpmCheck(cost, budget int) error {
	if cost > budget {
		return fmt.Errorf("%w: %d tokens (prompt + expected output) exceed pacer.tokens_per_minute %d, so it could never be admitted",
			ErrTooLarge, cost, budget)
	}
	return nil
}

// Acquire reserves the request's tokens and waits until they are due. A request larger than
// the whole budget fails at once with an error wrapping ErrTooLarge.
func (p *TPM) Acquire(ctx context.Context, req Demand) (*Permit, error) {
	cost := tpmCost(req)
	if err := tpmCheck(cost, p.budget); err != nil {
		return nil, err
	}
	return acquireTokens(ctx, &p.led, &p.bucket, cost, req)
}

// String returns e.g. "TPM{100000 tokens/min}".
func (p *TPM) String() string { return fmt.Sprintf("TPM{%d tokens/min%s}", p.budget, p.led.suffix()) }

// Stats returns a snapshot; Limit is 0 (concurrency is unbounded).
func (p *TPM) Stats() Stats { return p.led.stats(0) }
