package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// burst submits n identical forced-length requests at once to a fresh engine and returns each
// one's latency from submission to its last token, in simulated seconds, plus the wall (time to
// the last completion).
// With firstAlone, the first request reaches the prefill engine before the others, as it does
// when a client opens its connections one after another.
func burst(t *testing.T, speedup float64, firstAlone bool, n, prompt, tokens int) (lat []float64, wall float64) {
	clk, err := clock.New(speedup)
	require.NoError(t, err)
	e, err := NewEngine(clk, DSV4PD(), nil)
	require.NoError(t, err)
	e.Start()
	defer e.Stop()
	lat = make([]float64, n)
	var wg sync.WaitGroup
	start := clk.Now()
	for i := range n {
		g, err := e.Submit(Job{PromptTokens: prompt, MaxTokens: tokens, IgnoreEOS: true, Key: uint64(i)})
		require.NoError(t, err)
		if i == 0 && firstAlone {
			synctest.Wait()
		}
		wg.Go(func() {
			for {
				_, done, err := g.Next(context.Background(), 8)
				if err != nil || done {
					break
				}
			}
			lat[i] = clk.Since(start).Seconds()
		})
	}
	wg.Wait()
	return lat, clk.Since(start).Seconds()
}

func stats(v []float64) (lo, hi, mean float64) {
	lo, hi = v[0], v[0]
	for _, x := range v {
		lo, hi, mean = min(lo, x), max(hi, x), mean+x
	}
	return lo, hi, mean / float64(len(v))
}

// TestDecisiveBatchingCalibration checks docs/engine.md §6: 16 × 128 tokens with a ~200-token
// prompt finish in 5.4 s (lat_min 3.9 s, lat_mean 5.1 s), at speedup 1 and 20.
func TestDecisiveBatchingCalibration(t *testing.T) {
	for _, tc := range []struct {
		speedup    float64
		firstAlone bool
	}{{1, true}, {1, false}, {20, true}, {20, false}} {
		t.Run(fmt.Sprintf("speedup=%v/first-alone=%v", tc.speedup, tc.firstAlone), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lat, wall := burst(t, tc.speedup, tc.firstAlone, 16, 200, 128)
				lo, _, mean := stats(lat)
				t.Logf("wall=%.2fs lat_min=%.2fs lat_mean=%.2fs", wall, lo, mean)
				assert.InEpsilon(t, 5.4, wall, 0.10, "wall_s")
				assert.InEpsilon(t, 5.1, mean, 0.10, "lat_mean_s")
				assert.InEpsilon(t, 3.9, lo, 0.15, "lat_min_s")
			})
		})
	}
}

// TestPureDecodeThroughput checks the aggregate decode rate at 64 and 96 concurrent requests
// (812 and 845 tok/s), measured over the steady part where the whole batch is decoding.
func TestPureDecodeThroughput(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want float64
	}{{64, 812}, {96, 845}} {
		for _, speedup := range []float64{1, 20} {
			t.Run(fmt.Sprintf("c=%d/speedup=%v", tc.n, speedup), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					got := decodeRate(t, speedup, tc.n)
					t.Logf("%d concurrent: %.1f tok/s", tc.n, got)
					assert.InEpsilon(t, tc.want, got, 0.05, "tok/s at %d concurrent", tc.n)
				})
			})
		}
	}
}

// decodeRate measures tokens per simulated second across n streams once all are decoding.
func decodeRate(t *testing.T, speedup float64, n int) float64 {
	clk, err := clock.New(speedup)
	require.NoError(t, err)
	e, err := NewEngine(clk, DSV4PD(), nil)
	require.NoError(t, err)
	e.Start()
	defer e.Stop()
	gens := make([]*Gen, n)
	for i := range gens {
		gens[i], err = e.Submit(Job{PromptTokens: 200, MaxTokens: 512, IgnoreEOS: true, Key: uint64(i)})
		require.NoError(t, err)
	}
	for e.Stats().DecodeRunning < n {
		time.Sleep(clk.ToWall(100 * time.Millisecond))
	}
	g0, t0 := e.Stats().GeneratedTokens, clk.Now()
	time.Sleep(clk.ToWall(10 * time.Second))
	g1, t1 := e.Stats().GeneratedTokens, clk.Now()
	for _, g := range gens {
		e.Cancel(g)
	}
	return float64(g1-g0) / t1.Sub(t0).Seconds()
}
