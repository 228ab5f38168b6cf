package engine

import "math/rand/v2"

// SlowDecode multiplies every decode step time by Factor.
type SlowDecode struct {
	// Factor multiplies the decode step time, a number from 1 to 1000; default 3.
	Factor float64 `mapstructure:"factor"`
}

var _ Fault = (*SlowDecode)(nil)

// Name implements Fault.
func (*SlowDecode) Name() string { return "slow-decode" }

// String implements Fault.
func (s *SlowDecode) String() string { return describe(s) }

// Validate implements Fault.
func (s *SlowDecode) Validate() error {
	var ps problems
	ps.between("factor", s.Factor, 1, 1000)
	return ps.err()
}

func (s *SlowDecode) configure(k *Knobs)   { k.StepFactor *= s.Factor }
func (*SlowDecode) plan(*Plan, *rand.Rand) {}
