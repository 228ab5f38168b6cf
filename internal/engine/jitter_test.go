package engine

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// itls runs one forced-length request alone on the profile and returns the simulated time
// between its consecutive tokens.
func itls(t *testing.T, p *Profile, seed uint64, tokens int) []time.Duration {
	var gaps []time.Duration
	synctest.Test(t, func(t *testing.T) {
		faults, err := ParseFaults(nil, nil, seed)
		require.NoError(t, err)
		clk, err := clock.New(1)
		require.NoError(t, err)
		e, err := NewEngine(clk, p, faults)
		require.NoError(t, err)
		e.Start()
		defer e.Stop()
		g, err := e.Submit(Job{PromptTokens: 200, MaxTokens: tokens, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		var last time.Time
		for {
			n, done, err := g.Next(context.Background(), 1)
			require.NoError(t, err)
			if !last.IsZero() && n > 0 {
				gaps = append(gaps, clk.Since(last))
			}
			last = clk.Now()
			if done {
				return
			}
		}
	})
	return gaps
}

// TestStepJitter checks the step-time noise: deterministic steps without it; with it, the
// mean step stays the noiseless one, the tail spreads (p99 well above p50), slow steps take
// slow_step_factor times as long, and the same seed gives the same steps.
func TestStepJitter(t *testing.T) {
	p := DSV4PD()
	base := p.DecodeStep(1, 200+1)
	flat := itls(t, p, 1, 400)
	assert.InDelta(t, base.Seconds(), flat[len(flat)/2].Seconds(), 1e-4, "noiseless steps: %s each", base)
	assert.Less(t, slices.Max(flat)-slices.Min(flat), 400*10*time.Nanosecond, "noiseless steps vary only by the growing KV (10 ns a token)")

	p.StepJitterSigma, p.SlowStepProbability, p.SlowStepFactor = 0.2, 0.01, 10
	noisy := itls(t, p, 1, 4000)
	sorted := slices.Sorted(slices.Values(noisy))
	var sum time.Duration
	for _, d := range noisy {
		sum += d
	}
	mean := sum / time.Duration(len(noisy))
	want := time.Duration(float64(base) * (1 + 0.01*9)) // lognormal mean 1, slow steps add 1 % × 9
	p50, p99 := sorted[len(sorted)/2], sorted[len(sorted)*99/100]
	t.Logf("mean %s (want %s), p50 %s, p99 %s, max %s", mean, want, p50, p99, sorted[len(sorted)-1])
	assert.InEpsilon(t, want.Seconds(), mean.Seconds(), 0.05, "mean step")
	assert.Greater(t, p99, p50*3/2, "the tail spreads")
	slow := 0
	for _, d := range noisy {
		if d > 5*base {
			slow++
		}
	}
	assert.InDelta(t, 40, slow, 15, "about 1 %% of 4000 steps are slow")
	assert.Equal(t, noisy, itls(t, p, 1, 4000), "the same seed gives the same steps")
	assert.NotEqual(t, noisy, itls(t, p, 2, 4000), "another seed gives other steps")
}
