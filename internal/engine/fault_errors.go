package engine

import (
	"math/rand/v2"
	"time"
)

// Errors fails Rate of requests: with Kind 429, Submit rejects them as RateLimited (the HTTP
// front answers 429 with Retry-After); 503, as Overloaded (503); frame, they are admitted and
// fail mid-generation (an error frame inside the 200 stream); mix, one of the three at random.
type Errors struct {
	// Rate is the share of requests that fail, from 0 to 1; default 0.1.
	Rate float64 `mapstructure:"rate"`
	// Kind is 429, 503, frame or mix; default mix.
	Kind string `mapstructure:"kind"`
	// RetryAfter is the retry delay a 429 rejection carries, simulated time ≥ 0; default 5s.
	RetryAfter time.Duration `mapstructure:"retry_after"`
}

var _ Fault = (*Errors)(nil)

// errorKinds maps the Kind parameter to the failure it injects.
var errorKinds = map[string]Failure{"429": FailRateLimited, "503": FailOverloaded, "frame": FailMidStream}

// Name implements Fault.
func (*Errors) Name() string { return "errors" }

// String implements Fault.
func (e *Errors) String() string { return describe(e) }

// Validate implements Fault.
func (e *Errors) Validate() error {
	var ps problems
	ps.fraction("rate", e.Rate)
	ps.oneOf("kind", e.Kind, "429", "503", "frame", "mix")
	ps.nonNegative("retry_after", e.RetryAfter)
	return ps.err()
}

func (*Errors) configure(*Knobs) {}

func (e *Errors) plan(p *Plan, r *rand.Rand) {
	hit, pick, frac := r.Float64() < e.Rate, r.IntN(3), r.Float64()
	if !hit {
		return
	}
	kind, ok := errorKinds[e.Kind]
	if !ok {
		kind = []Failure{FailRateLimited, FailOverloaded, FailMidStream}[pick]
	}
	p.Failure, p.failFrac = kind, frac
	if kind == FailRateLimited {
		p.RetryAfter = e.RetryAfter
	}
}
