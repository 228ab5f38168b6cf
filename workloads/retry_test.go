package workloads

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRetryDelay(t *testing.T) {
	const s = time.Second
	exact := Retry{Max: 5, Backoff: s, MaxBackoff: 30 * s}
	half := Retry{Max: 5, Backoff: s, MaxBackoff: 30 * s, Jitter: 0.5}
	tests := []struct {
		r          Retry
		attempt    int
		retryAfter time.Duration
		u          float64
		want       time.Duration
	}{
		// No jitter: Backoff doubles per attempt.
		{exact, 1, 0, 0.7, 1 * s},
		{exact, 2, 0, 0.7, 2 * s},
		{exact, 4, 0, 0.7, 8 * s},
		// Capped by MaxBackoff.
		{exact, 6, 0, 0, 30 * s},
		// A huge attempt neither overflows nor escapes the cap.
		{exact, 1000, 0, 0, 30 * s},
		// Attempt below 1 counts as the first retry.
		{exact, 0, 0, 0, 1 * s},
		// Half jitter: u=0 gives the lowest delay, base·(1−0.5).
		{half, 3, 0, 0, 2 * s},
		// Half jitter: u=0.5 gives base·0.75.
		{half, 3, 0, 0.5, 3 * s},
		// Full jitter: u=0 gives zero.
		{Retry{Backoff: s, Jitter: 1}, 1, 0, 0, 0},
		// Retry-After larger than the backoff wins.
		{exact, 1, 7 * s, 0, 7 * s},
		// Retry-After smaller than the backoff is ignored.
		{exact, 4, 3 * s, 0, 8 * s},
		// Retry-After is capped too.
		{exact, 1, 120 * s, 0, 30 * s},
		// MaxBackoff 0: no cap, Retry-After honoured in full.
		{Retry{Backoff: s}, 1, 300 * s, 0, 300 * s},
		// No cap and a huge attempt saturates instead of overflowing.
		{Retry{Backoff: s}, 80, 0, 0, time.Duration(math.MaxInt64)},
		// A NaN draw is treated as 0.
		{half, 1, 0, math.NaN(), s / 2},
	}
	for _, tc := range tests {
		got := tc.r.Delay(tc.attempt, tc.retryAfter, tc.u)
		assert.Equal(t, tc.want, got, "%+v.Delay(%d, %v, %v) = %v; want %v",
			tc.r, tc.attempt, tc.retryAfter, tc.u, got, tc.want)
	}
}

func TestRetryShouldRetry(t *testing.T) {
	tests := []struct {
		max, attempt int
		want         bool
	}{
		{0, 1, false}, // Max 0 disables retries.
		{2, 1, true},  // The first retry of two.
		{2, 2, true},  // The last allowed retry.
		{2, 3, false}, // One too many.
		{2, 0, false}, // Attempt 0 is the original request, not a retry.
	}
	for _, tc := range tests {
		r := Retry{Max: tc.max}
		got := r.ShouldRetry(tc.attempt)
		assert.Equal(t, tc.want, got, "Retry{Max: %d}.ShouldRetry(%d) = %t; want %t", tc.max, tc.attempt, got, tc.want)
	}
}
