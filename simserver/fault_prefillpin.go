package simserver

import (
	"fmt"
	"math/rand/v2"
)

// PrefillPin pins Fraction of requests in the prefill inflight queue: they are prefilled but
// their KV transfer never completes, so their streams stay open and silent.
type PrefillPin struct{ Fraction float64 }

var _ Fault = (*PrefillPin)(nil)

// Name implements Fault.
func (*PrefillPin) Name() string { return "prefill-pin" }

// String implements Fault.
func (p *PrefillPin) String() string { return fmt.Sprintf("prefill-pin{fraction=%g}", p.Fraction) }

// Set implements Fault.
func (p *PrefillPin) Set(key, value string) error {
	if key != "fraction" {
		return unknownParam(p.Name(), key, "fraction")
	}
	v, err := parseFraction(key, value)
	p.Fraction = v
	return err
}

// Validate implements Fault.
func (p *PrefillPin) Validate() error { return nil }

func (*PrefillPin) configure(*Knobs) {}

func (p *PrefillPin) plan(pl *Plan, r *rand.Rand) {
	if r.Float64() < p.Fraction {
		pl.Pinned = true
	}
}
