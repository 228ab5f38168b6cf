package workloads

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// problems splits an errors.Join result into its messages.
func problems(err error) []string {
	if err == nil {
		return nil
	}
	var msgs []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			msgs = append(msgs, e.Error())
		}
		return msgs
	}
	return []string{err.Error()}
}

func TestTimeoutsValidate(t *testing.T) {
	tests := []struct {
		name string
		in   Timeouts
		want []string
	}{
		// Zero means none and is fine.
		{"all none", Timeouts{}, nil},
		// Positive timeouts are fine.
		{"all set", Timeouts{Request: time.Hour, TTFT: time.Minute, Idle: 30 * time.Second}, nil},
		// Every negative timeout is named.
		{"all negative", Timeouts{Request: -1, TTFT: -time.Second, Idle: -time.Minute}, []string{
			"request.timeout: -1ns is not allowed: want a duration ≥ 0 (0 means none)",
			"request.ttft_timeout: -1s is not allowed: want a duration ≥ 0 (0 means none)",
			"request.idle_timeout: -1m0s is not allowed: want a duration ≥ 0 (0 means none)"}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, problems(tc.in.Validate()), "%s: %+v.Validate()", tc.name, tc.in)
	}
}

func TestRetryValidate(t *testing.T) {
	tests := []struct {
		name string
		in   Retry
		want []string
	}{
		// The workload default.
		{"default", Retry{Max: 0, Backoff: time.Second, MaxBackoff: 30 * time.Second}, nil},
		// No cap, full jitter.
		{"no cap", Retry{Max: 3, Backoff: time.Second, Jitter: 1}, nil},
		// Every field wrong at once.
		{"all wrong", Retry{Max: -1, Backoff: -time.Second, MaxBackoff: -time.Second, Jitter: 1.5}, []string{
			"retry.max: -1 is not allowed: want an integer ≥ 0 (0 disables retries)",
			"retry.backoff: -1s is not allowed: want a duration ≥ 0",
			"retry.max_backoff: -1s is not allowed: want a duration ≥ 0 (0 means no cap)",
			"retry.jitter: 1.5 is not allowed: want a fraction from 0 to 1"}},
		// A cap below the first backoff.
		{"cap below backoff", Retry{Max: 2, Backoff: 2 * time.Second, MaxBackoff: time.Second, Jitter: math.NaN()}, []string{
			"retry.max_backoff: 1s is not allowed: want 0 (no cap) or a duration ≥ retry.backoff (2s)",
			"retry.jitter: NaN is not allowed: want a fraction from 0 to 1"}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, problems(tc.in.Validate()), "%s: %+v.Validate()", tc.name, tc.in)
	}
}
