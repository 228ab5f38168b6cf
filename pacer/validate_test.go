package pacer

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/clock"
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

func TestConfigValidate(t *testing.T) {
	aimd := Config{Kind: "aimd", InitialLimit: 20, MinLimit: 1, MaxLimit: 200, BackoffRatio: 0.9}
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		// Every kind's minimal valid configuration passes.
		{"unlimited ok", Config{Kind: "unlimited"}, nil},
		{"slots ok", Config{Kind: "slots", Slots: 30, LeakOnTimeout: true}, nil},
		{"rate ok", Config{Kind: "rate", RPS: 0.5, Burst: 1}, nil},
		{"slots+rate ok", Config{Kind: "slots+rate", Slots: 30, RPS: 2, Burst: 4}, nil},
		{"ticket ok", Config{Kind: "ticket", Slots: 30, RPS: 2}, nil},
		{"aimd ok", aimd, nil},
		{"aimd with latency target ok", func() Config { c := aimd; c.LatencyTarget = time.Minute; return c }(), nil},
		{"gradient ok", Config{Kind: "gradient", InitialLimit: 20, MinLimit: 20, MaxLimit: 200, Tolerance: 1.5}, nil},
		{"tpm ok", Config{Kind: "tpm", TokensPerMinute: 100000}, nil},
		// An unknown kind names the allowed ones.
		{"unknown kind", Config{Kind: "leaky"}, []string{
			`pacer.kind: "leaky" is not allowed: want one of aimd, gradient, rate, slots, slots+rate, ticket, tpm, unlimited`}},
		// The spec's example message.
		{"zero slots", Config{Kind: "slots"}, []string{
			`pacer.slots: 0 is not allowed: want an integer ≥ 1 for kind "slots"`}},
		// Every missing field of slots+rate is reported at once.
		{"slots+rate all missing", Config{Kind: "slots+rate"}, []string{
			`pacer.slots: 0 is not allowed: want an integer ≥ 1 for kind "slots+rate"`,
			`pacer.rps: 0 is not allowed: want a number from 0.0001 to 1000000 (requests per simulated second) for kind "slots+rate"`,
			`pacer.burst: 0 is not allowed: want an integer ≥ 1 for kind "slots+rate"`}},
		// Infinite and NaN rates are refused.
		{"rate inf", Config{Kind: "rate", RPS: math.Inf(1), Burst: 1}, []string{
			`pacer.rps: +Inf is not allowed: want a number from 0.0001 to 1000000 (requests per simulated second) for kind "rate"`}},
		{"ticket NaN", Config{Kind: "ticket", Slots: 1, RPS: math.NaN()}, []string{
			`pacer.rps: NaN is not allowed: want a number from 0.0001 to 1000000 (requests per simulated second) for kind "ticket"`}},
		// Fields the kind does not use are problems too, alongside its own.
		{"slots with rps and tolerance", Config{Kind: "slots", Slots: -1, RPS: 2, Tolerance: 1.5}, []string{
			`pacer.slots: -1 is not allowed: want an integer ≥ 1 for kind "slots"`,
			`pacer.rps: 2 is not allowed: kind "slots" does not use it, leave it unset (it applies to rate, slots+rate, ticket)`,
			`pacer.tolerance: 1.5 is not allowed: kind "slots" does not use it, leave it unset (it applies to gradient)`}},
		// Unlimited uses nothing.
		{"unlimited with slots", Config{Kind: "unlimited", Slots: 4}, []string{
			`pacer.slots: 4 is not allowed: kind "unlimited" does not use it, leave it unset (it applies to slots, slots+rate, ticket)`}},
		// aimd: ratio out of (0,1), negative target.
		{"aimd bad ratio and target", func() Config {
			c := aimd
			c.BackoffRatio, c.LatencyTarget = 1, -time.Second
			return c
		}(), []string{
			`pacer.backoff_ratio: 1 is not allowed: want a number between 0 and 1, both excluded for kind "aimd"`,
			`pacer.latency_target: -1s is not allowed: want a duration ≥ 0 (0 disables the latency signal) for kind "aimd"`}},
		// aimd: initial below min.
		{"aimd initial below min", func() Config { c := aimd; c.MinLimit = 30; return c }(), []string{
			`pacer.initial_limit: 20 is not allowed: want an integer from pacer.min_limit (30) to pacer.max_limit (200) for kind "aimd"`}},
		// gradient: min above max, reported with the tolerance problem.
		{"gradient min above max", Config{Kind: "gradient", InitialLimit: 20, MinLimit: 300, MaxLimit: 200, Tolerance: 0.5}, []string{
			`pacer.tolerance: 0.5 is not allowed: want a finite number ≥ 1 for kind "gradient"`,
			`pacer.min_limit: 300 is not allowed: want an integer ≤ pacer.max_limit (200) for kind "gradient"`}},
		// gradient: missing limits, no ordering noise on top.
		{"gradient limits missing", Config{Kind: "gradient", Tolerance: 2}, []string{
			`pacer.initial_limit: 0 is not allowed: want an integer ≥ 1 for kind "gradient"`,
			`pacer.min_limit: 0 is not allowed: want an integer ≥ 1 for kind "gradient"`,
			`pacer.max_limit: 0 is not allowed: want an integer ≥ 1 for kind "gradient"`}},
		// tpm: the budget is required and nothing else.
		{"tpm zero with burst", Config{Kind: "tpm", Burst: 10}, []string{
			`pacer.burst: 10 is not allowed: kind "tpm" does not use it, leave it unset (it applies to rate, slots+rate)`,
			`pacer.tokens_per_minute: 0 is not allowed: want an integer ≥ 1 (tokens per simulated minute) for kind "tpm"`}},
	}
	for _, tc := range tests {
		got := problems(tc.cfg.Validate())
		assert.Equal(t, tc.want, got, "%s: %+v.Validate()", tc.name, tc.cfg)
	}
}

func TestNewRefusesBadInput(t *testing.T) {
	_, err := New(Config{Kind: "slots"}, nil)
	assert.EqualError(t, err, "pacer: nil clock", "New(slots, nil clock)")
	_, err = New(Config{Kind: "slots+rate", Slots: 1}, clock.Real())
	assert.Len(t, problems(err), 2, "New(slots+rate without rps and burst) problems: %v", err)
	assert.False(t, errors.Is(err, ErrTooLarge), "a config error is not ErrTooLarge")
}
