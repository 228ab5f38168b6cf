package simserver

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// StallStream pauses Fraction of streams once, at a random point mid-generation, for Duration;
// the request leaves the running batch (keeping its KV) and resumes afterwards.
type StallStream struct {
	Fraction float64
	Duration time.Duration
}

var _ Fault = (*StallStream)(nil)

// Name implements Fault.
func (*StallStream) Name() string { return "stall-stream" }

// String implements Fault.
func (s *StallStream) String() string {
	return fmt.Sprintf("stall-stream{fraction=%g duration=%s}", s.Fraction, s.Duration)
}

// Set implements Fault.
func (s *StallStream) Set(key, value string) error {
	var err error
	switch key {
	case "fraction":
		s.Fraction, err = parseFraction(key, value)
	case "duration":
		s.Duration, err = parseDuration(key, value)
	default:
		return unknownParam(s.Name(), key, "fraction", "duration")
	}
	return err
}

// Validate implements Fault.
func (s *StallStream) Validate() error {
	if s.Duration <= 0 {
		return fmt.Errorf("duration: %s is not allowed: want a duration > 0", s.Duration)
	}
	return nil
}

func (*StallStream) configure(*Knobs) {}

func (s *StallStream) plan(p *Plan, r *rand.Rand) {
	hit, frac := r.Float64() < s.Fraction, r.Float64()
	if hit {
		p.StallFor, p.stallFrac = s.Duration, frac
	}
}
