package simserver

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// SlowDecode multiplies every decode step time by Factor.
type SlowDecode struct{ Factor float64 }

var _ Fault = (*SlowDecode)(nil)

// Name implements Fault.
func (*SlowDecode) Name() string { return "slow-decode" }

// String implements Fault.
func (s *SlowDecode) String() string { return fmt.Sprintf("slow-decode{factor=%g}", s.Factor) }

// Set implements Fault.
func (s *SlowDecode) Set(key, value string) error {
	if key != "factor" {
		return unknownParam(s.Name(), key, "factor")
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return fmt.Errorf("factor: %q is not allowed: want a number ≥ 1", value)
	}
	s.Factor = v
	return nil
}

// Validate implements Fault.
func (s *SlowDecode) Validate() error {
	if !(s.Factor >= 1 && s.Factor <= 1000) {
		return fmt.Errorf("factor: %g is not allowed: want a number from 1 to 1000", s.Factor)
	}
	return nil
}

func (s *SlowDecode) configure(k *Knobs)   { k.StepFactor *= s.Factor }
func (*SlowDecode) plan(*Plan, *rand.Rand) {}
