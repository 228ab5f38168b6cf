package pacer

import (
	"context"

	"github.com/agentsim/agentsim/clock"
)

// Unlimited admits every request at once. Its known failure: it floods the server.
type Unlimited struct {
	led ledger
}

var _ Pacer = (*Unlimited)(nil)

func newUnlimited(cfg Config, clk *clock.Clock) *Unlimited {
	return &Unlimited{led: newLedger(cfg, clk, nil)}
}

// Acquire grants a permit at once unless ctx is already done.
func (u *Unlimited) Acquire(ctx context.Context, req Demand) (*Permit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return u.led.issue(req, nil), nil
}

// String returns "Unlimited{}".
func (u *Unlimited) String() string { return "Unlimited{" + trimComma(u.led.suffix()) + "}" }

// Stats returns a snapshot; Limit is 0 (unbounded).
func (u *Unlimited) Stats() Stats { return u.led.stats(0) }

// trimComma drops the ", " that separates a suffix from preceding parameters.
func trimComma(s string) string {
	if len(s) >= 2 && s[:2] == ", " {
		return s[2:]
	}
	return s
}
