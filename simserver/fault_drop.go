package simserver

import (
	"fmt"
	"math/rand/v2"
)

// Drop cuts Fraction of streams mid-generation: the connection closes before the final chunk
// and [DONE].
type Drop struct{ Fraction float64 }

var _ Fault = (*Drop)(nil)

// Name implements Fault.
func (*Drop) Name() string { return "drop" }

// String implements Fault.
func (d *Drop) String() string { return fmt.Sprintf("drop{fraction=%g}", d.Fraction) }

// Set implements Fault.
func (d *Drop) Set(key, value string) error {
	if key != "fraction" {
		return unknownParam(d.Name(), key, "fraction")
	}
	v, err := parseFraction(key, value)
	d.Fraction = v
	return err
}

// Validate implements Fault.
func (*Drop) Validate() error { return nil }

func (*Drop) configure(*Knobs) {}

func (d *Drop) plan(p *Plan, r *rand.Rand) {
	hit, frac := r.Float64() < d.Fraction, r.Float64()
	if hit {
		p.dropFrac = max(frac, 1e-9)
	}
}
