package engine

import "math/rand/v2"

// PrefillPin pins Fraction of requests in the prefill inflight queue: they are prefilled but
// their KV transfer never completes, so their streams stay open and silent.
type PrefillPin struct {
	// Fraction is the share of requests pinned, from 0 to 1; default 0.1.
	Fraction float64 `mapstructure:"fraction"`
}

var _ Fault = (*PrefillPin)(nil)

// Name implements Fault.
func (*PrefillPin) Name() string { return "prefill-pin" }

// String implements Fault.
func (p *PrefillPin) String() string { return describe(p) }

// Validate implements Fault.
func (p *PrefillPin) Validate() error {
	var ps problems
	ps.fraction("fraction", p.Fraction)
	return ps.err()
}

func (*PrefillPin) configure(*Knobs) {}

func (p *PrefillPin) plan(pl *Plan, r *rand.Rand) {
	if r.Float64() < p.Fraction {
		pl.Pinned = true
	}
}
