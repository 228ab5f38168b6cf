package engine

import "math/rand/v2"

// Drop cuts Fraction of deliveries mid-generation: the connection closes before the finish
// and [DONE].
type Drop struct {
	// Fraction is the share of requests cut, from 0 to 1; default 0.05.
	Fraction float64 `mapstructure:"fraction"`
}

var _ Fault = (*Drop)(nil)

// Name implements Fault.
func (*Drop) Name() string { return "drop" }

// String implements Fault.
func (d *Drop) String() string { return describe(d) }

// Validate implements Fault.
func (d *Drop) Validate() error {
	var ps problems
	ps.fraction("fraction", d.Fraction)
	return ps.err()
}

func (*Drop) configure(*Knobs) {}

func (d *Drop) plan(p *Plan, r *rand.Rand) {
	hit, frac := r.Float64() < d.Fraction, r.Float64()
	if hit {
		p.dropFrac = max(frac, 1e-9)
	}
}
