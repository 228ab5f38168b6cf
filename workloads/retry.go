package workloads

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Retry is the retry policy for failed requests, in simulated time.
type Retry struct {
	// Max is the number of retries after the first attempt; 0 disables retries.
	Max int `mapstructure:"max" yaml:"max"`
	// Backoff is the first retry's base delay; each later retry doubles it.
	Backoff time.Duration `mapstructure:"backoff" yaml:"backoff"`
	// MaxBackoff caps the delay, Retry-After included; 0 means no cap.
	MaxBackoff time.Duration `mapstructure:"max_backoff" yaml:"max_backoff"`
	// Jitter is the fraction (0–1) of the delay that is randomised.
	Jitter float64 `mapstructure:"jitter" yaml:"jitter"`
}

// ShouldRetry reports whether retry number attempt (1 for the first retry after the original
// request) is allowed: 1 ≤ attempt ≤ Max.
func (r Retry) ShouldRetry(attempt int) bool { return attempt >= 1 && attempt <= r.Max }

// Delay returns how long to wait, in simulated time, before retry number attempt (1 for the
// first retry). The base delay is Backoff·2^(attempt−1); Jitter randomises that fraction of
// it, giving base·(1 − Jitter + Jitter·u) for the caller's uniform draw u in [0, 1); a larger
// retryAfter (the server's Retry-After, 0 when absent) replaces it; MaxBackoff caps the result
// (0 means no cap). Delay is pure: the same arguments give the same delay.
func (r Retry) Delay(attempt int, retryAfter time.Duration, u float64) time.Duration {
	if !(u >= 0) { // also NaN
		u = 0
	}
	u = min(u, 1)
	jitter := r.Jitter
	if !(jitter >= 0) { // also NaN
		jitter = 0
	}
	jitter = min(jitter, 1)
	exp := min(max(attempt, 1)-1, 62)
	d := float64(r.Backoff) * math.Exp2(float64(exp)) * (1 - jitter + jitter*u)
	d = max(d, float64(retryAfter))
	if r.MaxBackoff > 0 {
		d = min(d, float64(r.MaxBackoff))
	}
	if d >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// Validate checks the retry policy and returns every problem at once (nil when r is valid),
// each naming its key: retry.max ≥ 0, retry.backoff ≥ 0, retry.max_backoff 0 (no cap) or
// ≥ retry.backoff, retry.jitter from 0 to 1.
func (r Retry) Validate() error {
	var errs []error
	if r.Max < 0 {
		errs = append(errs, fmt.Errorf("retry.max: %d is not allowed: want an integer ≥ 0 (0 disables retries)", r.Max))
	}
	if r.Backoff < 0 {
		errs = append(errs, fmt.Errorf("retry.backoff: %v is not allowed: want a duration ≥ 0", r.Backoff))
	}
	switch {
	case r.MaxBackoff < 0:
		errs = append(errs, fmt.Errorf("retry.max_backoff: %v is not allowed: want a duration ≥ 0 (0 means no cap)", r.MaxBackoff))
	case r.MaxBackoff > 0 && r.MaxBackoff < r.Backoff:
		errs = append(errs, fmt.Errorf("retry.max_backoff: %v is not allowed: want 0 (no cap) or a duration ≥ retry.backoff (%v)",
			r.MaxBackoff, r.Backoff))
	}
	if !(r.Jitter >= 0 && r.Jitter <= 1) { // also rejects NaN
		errs = append(errs, fmt.Errorf("retry.jitter: %v is not allowed: want a fraction from 0 to 1", r.Jitter))
	}
	return errors.Join(errs...)
}
