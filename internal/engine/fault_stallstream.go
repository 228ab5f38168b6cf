package engine

import (
	"math/rand/v2"
	"time"
)

// StallStream pauses Fraction of streams once, at a random point mid-generation, for Duration;
// the request leaves the running batch (keeping its KV) and resumes afterwards.
type StallStream struct {
	// Fraction is the share of requests stalled, from 0 to 1; default 0.1.
	Fraction float64 `mapstructure:"fraction"`
	// Duration is how long a stalled request pauses, simulated time > 0; default 60s.
	Duration time.Duration `mapstructure:"duration"`
}

var _ Fault = (*StallStream)(nil)

// Name implements Fault.
func (*StallStream) Name() string { return "stall-stream" }

// String implements Fault.
func (s *StallStream) String() string { return describe(s) }

// Validate implements Fault.
func (s *StallStream) Validate() error {
	var ps problems
	ps.fraction("fraction", s.Fraction)
	ps.positive("duration", s.Duration)
	return ps.err()
}

func (*StallStream) configure(*Knobs) {}

func (s *StallStream) plan(p *Plan, r *rand.Rand) {
	hit, frac := r.Float64() < s.Fraction, r.Float64()
	if hit {
		p.StallFor, p.stallFrac = s.Duration, frac
	}
}
