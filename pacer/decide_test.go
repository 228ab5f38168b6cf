package pacer

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

func TestAdmits(t *testing.T) {
	tests := []struct {
		held, limit, queued int
		want                bool
	}{
		{0, 1, 0, true},   // An idle semaphore admits.
		{15, 16, 0, true}, // The last free slot.
		{16, 16, 0, false},
		{3, 16, 1, false},  // FIFO: a newcomer may not pass a queued waiter.
		{20, 10, 0, false}, // After a limit decrease, held above the limit admits nobody.
	}
	for _, tc := range tests {
		got := admits(tc.held, tc.limit, tc.queued)
		assert.Equal(t, tc.want, got, "admits(%d, %d, %d) = %t; want %t", tc.held, tc.limit, tc.queued, got, tc.want)
	}
}

func TestAIMDNext(t *testing.T) {
	p := aimdParams{min: 1, max: 200, ratio: 0.9}
	withTarget := aimdParams{min: 1, max: 200, ratio: 0.5, target: time.Minute}
	tests := []struct {
		p               aimdParams
		limit, inflight int
		o               Outcome
		want            int
	}{
		// A success with at least half the limit in flight grows by one.
		{p, 20, 10, Outcome{Kind: events.RequestSuccess}, 21},
		// A success while application-limited (inflight·2 < limit) leaves the limit.
		{p, 20, 9, Outcome{Kind: events.RequestSuccess}, 20},
		// A timeout multiplies by the ratio, flooring: 20×0.9 = 18.
		{p, 20, 20, Outcome{Kind: events.RequestTimeout}, 18},
		// An error does too: 11×0.9 = 9.9 → 9.
		{p, 11, 1, Outcome{Kind: events.RequestError}, 9},
		// A cut never goes below MinLimit.
		{p, 1, 1, Outcome{Kind: events.RequestTimeout}, 1},
		// Growth never exceeds MaxLimit.
		{p, 200, 200, Outcome{Kind: events.RequestSuccess}, 200},
		// A cancellation is no signal at all.
		{p, 20, 20, Outcome{Kind: events.RequestCancelled}, 20},
		// A success slower than the latency target is congestion.
		{withTarget, 20, 20, Outcome{Kind: events.RequestSuccess, Latency: 61 * time.Second}, 10},
		// A success exactly at the target is not.
		{withTarget, 20, 20, Outcome{Kind: events.RequestSuccess, Latency: time.Minute}, 21},
		// Without a target, a 300 s success still grows the limit.
		{p, 20, 20, Outcome{Kind: events.RequestSuccess, Latency: 300 * time.Second}, 21},
	}
	for _, tc := range tests {
		got := aimdNext(tc.p, tc.limit, tc.inflight, tc.o)
		assert.Equal(t, tc.want, got, "aimdNext(%+v, %d, %d, %+v) = %d; want %d",
			tc.p, tc.limit, tc.inflight, tc.o, got, tc.want)
	}
}

func TestExpAvg(t *testing.T) {
	var e expAvg
	for i := 1; i <= gradientWarmup; i++ {
		e = e.add(float64(i))
	}
	// Warm-up: the plain mean of 1..10.
	assert.InDelta(t, 5.5, e.value, 1e-12, "expAvg after 1..10")
	e = e.add(5.5 + 601) // factor 2/601: moves the value by exactly 2
	assert.InDelta(t, 7.5, e.value, 1e-9, "expAvg.add after warm-up")
	assert.InDelta(t, 7.5*0.95, e.scale(0.95).value, 1e-9, "expAvg.scale(0.95)")
}

func TestGradient2Next(t *testing.T) {
	base := gradient2{limit: 20, min: 1, max: 200, tolerance: 1.5}
	warm := base
	for range gradientWarmup {
		warm.long = warm.long.add(1) // long RTT 1 s
	}
	tests := []struct {
		name      string
		g         gradient2
		rtt       time.Duration
		inflight  int
		wantLimit float64
		wantLong  float64
	}{
		// First sample: long = short, gradient = 1, the limit grows by 0.2·√20.
		{"first sample", base, 2 * time.Second, 20, 20 + 0.2*math.Sqrt(20), 2},
		// Application-limited (inflight < limit/2): the long RTT learns, the limit stays.
		{"app limited", base, 2 * time.Second, 9, 20, 2},
		// No latency, no sample.
		{"zero rtt", base, 0, 20, 20, 0},
		// A 300 s request after 1 s ones: gradient clamps at 0.5; the limit falls by a tenth only.
		{"slow request", warm, 300 * time.Second, 20,
			20*0.8 + (20*0.5+math.Sqrt(20))*0.2, 1*599.0/601 + 300*2.0/601},
		// A short RTT at half the long one: tolerance·long/short = 3 → clamped to 1, growth.
		{"fast request", warm, 500 * time.Millisecond, 20, 20 + 0.2*math.Sqrt(20), 1*599.0/601 + 0.5*2.0/601},
		// Latency back to normal (long/short > 2): the long RTT also decays ×0.95.
		{"recovery", warm, 100 * time.Millisecond, 20, 20 + 0.2*math.Sqrt(20), (1*599.0/601 + 0.1*2.0/601) * 0.95},
		// The limit never falls below MinLimit (10·0.8 + (10·0.5 + √10)·0.2 ≈ 9.6 → 10).
		{"floor", gradient2{limit: 10, min: 10, max: 200, tolerance: 1, long: warm.long}, 300 * time.Second, 10,
			10, 1*599.0/601 + 300*2.0/601},
	}
	for _, tc := range tests {
		got := tc.g.next(tc.rtt, tc.inflight)
		assert.InDelta(t, tc.wantLimit, got.limit, 1e-9, "%s: %+v.next(%v, %d).limit = %v; want %v",
			tc.name, tc.g, tc.rtt, tc.inflight, got.limit, tc.wantLimit)
		assert.InDelta(t, tc.wantLong, got.long.value, 1e-9, "%s: %+v.next(%v, %d).long = %v; want %v",
			tc.name, tc.g, tc.rtt, tc.inflight, got.long.value, tc.wantLong)
	}
}

func TestTPMCheck(t *testing.T) {
	tests := []struct {
		req    Demand
		budget int
		tooBig bool
	}{
		{Demand{PromptTokens: 4000, ExpectedOutputTokens: 2000}, 6000, false}, // Exactly the budget fits.
		{Demand{PromptTokens: 4000, ExpectedOutputTokens: 2001}, 6000, true},  // One token over never fits.
		{Demand{PromptTokens: -5, ExpectedOutputTokens: 10}, 10, false},       // Negative counts count as 0.
	}
	for _, tc := range tests {
		err := tpmCheck(tpmCost(tc.req), tc.budget)
		assert.Equal(t, tc.tooBig, errors.Is(err, ErrTooLarge), "tpmCheck(tpmCost(%+v), %d) = %v", tc.req, tc.budget, err)
	}
}

func TestFormatRate(t *testing.T) {
	for in, want := range map[float64]string{2: "2.0", 0.25: "0.25", 1e9: "1000000000.0", 12.5: "12.5"} {
		assert.Equal(t, want, formatRate(in), "formatRate(%v)", in)
	}
}

func TestKinds(t *testing.T) {
	assert.Equal(t, []Kind{"aimd", "gradient", "rate", "slots", "slots+rate", "ticket", "tpm", "unlimited"}, Kinds())
}

func TestString(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Kind: "unlimited"}, "Unlimited{}"},
		{Config{Kind: "unlimited", LeakOnTimeout: true}, "Unlimited{leak_on_timeout}"},
		{Config{Kind: "slots", Slots: 30}, "Slots{30}"},
		{Config{Kind: "slots", Slots: 16, LeakOnTimeout: true}, "Slots{16, leak_on_timeout}"},
		{Config{Kind: "rate", RPS: 2, Burst: 4}, "Rate{2.0 rps, burst 4}"},
		{Config{Kind: "slots+rate", Slots: 30, RPS: 0.5, Burst: 4}, "SlotsRate{30 slots, 0.5 rps, burst 4}"},
		{Config{Kind: "ticket", Slots: 30, RPS: 2}, "Ticket{30 tickets, 2.0 rps}"},
		{Config{Kind: "aimd", InitialLimit: 20, MinLimit: 1, MaxLimit: 200, BackoffRatio: 0.9}, "AIMD{limit 20 [1..200] ×0.9}"},
		{Config{Kind: "aimd", InitialLimit: 20, MinLimit: 1, MaxLimit: 200, BackoffRatio: 0.5, LatencyTarget: time.Minute},
			"AIMD{limit 20 [1..200] ×0.5, target 1m0s}"},
		{Config{Kind: "gradient", InitialLimit: 20, MinLimit: 20, MaxLimit: 200, Tolerance: 1.5},
			"Gradient2{limit 20 [20..200], tolerance 1.5}"},
		{Config{Kind: "tpm", TokensPerMinute: 100000}, "TPM{100000 tokens/min}"},
	}
	for _, tc := range tests {
		p, err := New(tc.cfg, clock.Real())
		require.NoError(t, err, "New(%+v)", tc.cfg)
		assert.Equal(t, tc.want, p.String(), "New(%+v).String()", tc.cfg)
		if c, ok := p.(interface{ Close() error }); ok {
			assert.NoError(t, c.Close())
		}
		assert.False(t, strings.Contains(p.String(), "%!"), "bad verb in %q", p.String())
	}
}

// Releasing a nil permit (an Acquire that failed) is a no-op, not a panic.
func TestNilPermitRelease(t *testing.T) {
	var p *Permit
	assert.NotPanics(t, func() { p.Release(Outcome{}) }, "(*Permit)(nil).Release")
}
