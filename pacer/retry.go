package pacer

import (
	"math"
	"time"
)

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
