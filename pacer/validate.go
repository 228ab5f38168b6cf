package pacer

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Config keys as the workload file spells them.
const (
	keySlots           = "pacer.slots"
	keyRPS             = "pacer.rps"
	keyBurst           = "pacer.burst"
	keyInitialLimit    = "pacer.initial_limit"
	keyMinLimit        = "pacer.min_limit"
	keyMaxLimit        = "pacer.max_limit"
	keyBackoffRatio    = "pacer.backoff_ratio"
	keyLatencyTarget   = "pacer.latency_target"
	keyTolerance       = "pacer.tolerance"
	keyTokensPerMinute = "pacer.tokens_per_minute"
)

// configField is the rule for one numeric Config field.
type configField struct {
	key   string
	value func(Config) any // the field's value; compared with Config{}'s to tell if it is set
	valid func(Config) bool
	want  string
	copy  func(dst *Config, src Config) // sets dst's field to src's
}

var configFields = []configField{
	{keySlots, func(c Config) any { return c.Slots }, func(c Config) bool { return c.Slots >= 1 },
		"an integer ≥ 1",
		func(dst *Config, src Config) { dst.Slots = src.Slots }},
	{keyRPS, func(c Config) any { return c.RPS }, func(c Config) bool { return c.RPS >= MinRPS && c.RPS <= MaxRPS },
		"a number from 0.0001 to 1000000 (requests per simulated second)",
		func(dst *Config, src Config) { dst.RPS = src.RPS }},
	{keyBurst, func(c Config) any { return c.Burst }, func(c Config) bool { return c.Burst >= 1 },
		"an integer ≥ 1",
		func(dst *Config, src Config) { dst.Burst = src.Burst }},
	{keyInitialLimit, func(c Config) any { return c.InitialLimit },
		func(c Config) bool { return c.InitialLimit >= 1 }, "an integer ≥ 1",
		func(dst *Config, src Config) { dst.InitialLimit = src.InitialLimit }},
	{keyMinLimit, func(c Config) any { return c.MinLimit },
		func(c Config) bool { return c.MinLimit >= 1 }, "an integer ≥ 1",
		func(dst *Config, src Config) { dst.MinLimit = src.MinLimit }},
	{keyMaxLimit, func(c Config) any { return c.MaxLimit },
		func(c Config) bool { return c.MaxLimit >= 1 }, "an integer ≥ 1",
		func(dst *Config, src Config) { dst.MaxLimit = src.MaxLimit }},
	{keyBackoffRatio, func(c Config) any { return c.BackoffRatio },
		func(c Config) bool { return c.BackoffRatio > 0 && c.BackoffRatio < 1 },
		"a number between 0 and 1, both excluded",
		func(dst *Config, src Config) { dst.BackoffRatio = src.BackoffRatio }},
	{keyLatencyTarget, func(c Config) any { return c.LatencyTarget },
		func(c Config) bool { return c.LatencyTarget >= 0 },
		"a duration ≥ 0 (0 disables the latency signal)",
		func(dst *Config, src Config) { dst.LatencyTarget = src.LatencyTarget }},
	{keyTolerance, func(c Config) any { return c.Tolerance },
		func(c Config) bool { return positive(c.Tolerance) && c.Tolerance >= 1 }, "a finite number ≥ 1",
		func(dst *Config, src Config) { dst.Tolerance = src.Tolerance }},
	{keyTokensPerMinute, func(c Config) any { return c.TokensPerMinute },
		func(c Config) bool { return c.TokensPerMinute >= 1 },
		"an integer ≥ 1 (tokens per simulated minute)",
		func(dst *Config, src Config) { dst.TokensPerMinute = src.TokensPerMinute }},
}

// The bounds of pacer.rps (its message spells them): below MinRPS (one request in under three simulated hours) the
// interval between requests outlasts any run, and 1e-300 would overflow it; above MaxRPS no
// server is paced.
const (
	MinRPS = 1e-4
	MaxRPS = 1e6
)

func positive(f float64) bool { return f > 0 && !math.IsInf(f, 1) }

// Validate checks c and returns every problem at once, joined with errors.Join (nil when c is
// valid). Each problem names the key as the workload file spells it, the value and what is
// allowed, e.g. `pacer.slots: 0 is not allowed: want an integer ≥ 1 for kind "slots"`. Fields
// the kind does not use must be left unset.
func (c Config) Validate() error {
	d, ok := designs[c.Kind]
	if !ok {
		return fmt.Errorf("pacer.kind: %q is not allowed: want one of %s",
			c.Kind, joinKinds(Kinds()))
	}
	var errs []error
	for _, f := range configFields {
		v := f.value(c)
		switch {
		case slices.Contains(d.uses, f.key):
			if !f.valid(c) {
				errs = append(errs, fmt.Errorf("%s: %v is not allowed: want %s for kind %q",
					f.key, v, f.want, c.Kind))
			}
		case v != f.value(Config{}):
			errs = append(errs, fmt.Errorf("%s: %v is not allowed: kind %q does not use it, leave it unset (it applies to %s)",
				f.key, v, c.Kind, joinKinds(kindsUsing(f.key))))
		}
	}
	if slices.Contains(d.uses, keyMinLimit) && c.MinLimit >= 1 && c.InitialLimit >= 1 && c.MaxLimit >= 1 {
		errs = append(errs, c.limitOrder()...)
	}
	return errors.Join(errs...)
}

// limitOrder checks MinLimit ≤ InitialLimit ≤ MaxLimit for fields that are each ≥ 1.
func (c Config) limitOrder() []error {
	if c.MinLimit > c.MaxLimit {
		return []error{fmt.Errorf("%s: %d is not allowed: want an integer ≤ %s (%d) for kind %q",
			keyMinLimit, c.MinLimit, keyMaxLimit, c.MaxLimit, c.Kind)}
	}
	if c.InitialLimit < c.MinLimit || c.InitialLimit > c.MaxLimit {
		return []error{fmt.Errorf("%s: %d is not allowed: want an integer from %s (%d) to %s (%d) for kind %q",
			keyInitialLimit, c.InitialLimit, keyMinLimit, c.MinLimit, keyMaxLimit, c.MaxLimit, c.Kind)}
	}
	return nil
}

// kindsUsing lists, sorted, the kinds that read key.
func kindsUsing(key string) []Kind {
	var kinds []Kind
	for _, k := range Kinds() {
		if slices.Contains(designs[k].uses, key) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// joinKinds lists kinds separated by commas.
func joinKinds(kinds []Kind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}
