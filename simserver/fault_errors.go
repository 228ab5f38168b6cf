package simserver

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Errors fails Rate of requests: with Kind 429, a 429 with Retry-After before the stream; 503,
// a 503 before the stream; frame, an error frame inside the 200 stream; mix, one of the three
// at random.
type Errors struct {
	Rate       float64
	Kind       string
	RetryAfter time.Duration
}

var _ Fault = (*Errors)(nil)

var errorKinds = map[string]ErrorKind{"429": Error429, "503": Error503, "frame": ErrorFrame}

// Name implements Fault.
func (*Errors) Name() string { return "errors" }

// String implements Fault.
func (e *Errors) String() string {
	return fmt.Sprintf("errors{rate=%g kind=%s retry_after=%s}", e.Rate, e.Kind, e.RetryAfter)
}

// Set implements Fault.
func (e *Errors) Set(key, value string) error {
	var err error
	switch key {
	case "rate":
		e.Rate, err = parseFraction(key, value)
	case "kind":
		e.Kind = value
	case "retry_after":
		e.RetryAfter, err = parseDuration(key, value)
	default:
		return unknownParam(e.Name(), key, "rate", "kind", "retry_after")
	}
	return err
}

// Validate implements Fault.
func (e *Errors) Validate() error {
	if _, ok := errorKinds[e.Kind]; !ok && e.Kind != "mix" {
		return fmt.Errorf("kind: %q is not allowed: want 429, 503, frame or mix", e.Kind)
	}
	return nil
}

func (*Errors) configure(*Knobs) {}

func (e *Errors) plan(p *Plan, r *rand.Rand) {
	hit, pick, frac := r.Float64() < e.Rate, r.IntN(3), r.Float64()
	if !hit {
		return
	}
	kind, ok := errorKinds[e.Kind]
	if !ok {
		kind = []ErrorKind{Error429, Error503, ErrorFrame}[pick]
	}
	p.Error, p.errorFrac = kind, frac
	if kind == Error429 {
		p.RetryAfter = e.RetryAfter
	}
}
