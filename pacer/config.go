package pacer

import "time"

// Config selects and parameterises one pacer design. It is the `pacer:` section of a workload
// file; fields that do not apply to Kind must be left at zero. A workload that names a kind
// but leaves some of its parameters unset gets them from Defaults (see WithDefaults).
type Config struct {
	// Kind is one of the names in Kinds: unlimited, slots, rate, slots+rate, ticket, aimd,
	// gradient, tpm.
	Kind Kind `mapstructure:"kind" yaml:"kind"`
	// Slots is the number of permits (slots, slots+rate) or the ticket channel's capacity
	// (ticket); ≥ 1.
	Slots int `mapstructure:"slots" yaml:"slots,omitempty"`
	// RPS is the token-bucket refill rate in requests per simulated second (rate, slots+rate)
	// or the ticket issue rate (ticket); > 0.
	RPS float64 `mapstructure:"rps" yaml:"rps,omitempty"`
	// Burst is the token bucket's size (rate, slots+rate); ≥ 1.
	Burst int `mapstructure:"burst" yaml:"burst,omitempty"`
	// InitialLimit, MinLimit and MaxLimit bound an adaptive concurrency limit (aimd, gradient);
	// 1 ≤ MinLimit ≤ InitialLimit ≤ MaxLimit.
	InitialLimit int `mapstructure:"initial_limit" yaml:"initial_limit,omitempty"`
	MinLimit     int `mapstructure:"min_limit" yaml:"min_limit,omitempty"`
	MaxLimit     int `mapstructure:"max_limit" yaml:"max_limit,omitempty"`
	// BackoffRatio multiplies the aimd limit on a timeout, an error or a latency over
	// LatencyTarget; in (0, 1).
	BackoffRatio float64 `mapstructure:"backoff_ratio" yaml:"backoff_ratio,omitempty"`
	// LatencyTarget is the aimd latency above which a success counts as congestion
	// (simulated time); 0 disables the latency signal.
	LatencyTarget time.Duration `mapstructure:"latency_target" yaml:"latency_target,omitempty"`
	// Tolerance is Gradient2's RTT tolerance (≥ 1).
	Tolerance float64 `mapstructure:"tolerance" yaml:"tolerance,omitempty"`
	// TokensPerMinute is the tpm budget, refilled continuously per simulated minute; > 0.
	TokensPerMinute int `mapstructure:"tokens_per_minute" yaml:"tokens_per_minute,omitempty"`
	// LeakOnTimeout reproduces the buggy release path: a permit whose request timed out is
	// never released.
	LeakOnTimeout bool `mapstructure:"leak_on_timeout" yaml:"leak_on_timeout,omitempty"`
	// HoldAcrossTools reproduces the harness that keeps its permit while the tools of a reply
	// run: an agent with tools releases its permit after the tools, not when the response
	// ends. The agents read it; the pacer designs do not.
	HoldAcrossTools bool `mapstructure:"hold_across_tools" yaml:"hold_across_tools"`
}
