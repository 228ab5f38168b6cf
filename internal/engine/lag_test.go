package engine

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
)

// readAll reads g's tokens one delivery at a time, telling e of each as the HTTP front does,
// and returns Behind as it stood after the first delivery, once the engine's goroutines had
// gone on to their next wait.
func readAll(t *testing.T, e *Engine, g *Gen) (behind time.Duration) {
	t.Helper()
	for first := true; ; first = false {
		n, done, err := g.Next(context.Background(), 1)
		require.NoError(t, err)
		if n > 0 {
			e.Delivered(g)
		}
		if first {
			synctest.Wait()
			behind = e.Behind()
		}
		if done {
			return behind
		}
	}
}

// TestLagCountsWhatTheModelDoesNot: tokens come as late as the simulator's own work made them
// — the overhead of each step (standing in for its compute at a speedup the machine cannot
// keep up with), the time between the client's send and Submit — and no later. On the
// disaggregated profile the prefill engine's lateness carries over the KV transfer, which is
// scheduled from the clock's now: a token comes two overheads late. On a colocated profile,
// one. While the decode loop waits for its next step, on schedule, the engine is behind by
// what the request carries in: the prefill's overhead, or the time to Submit. A simulator that
// keeps up delivers every token on time.
func TestLagCountsWhatTheModelDoesNot(t *testing.T) {
	const overhead = 2 * time.Millisecond
	for _, tc := range []struct {
		name     string
		profile  string
		overhead time.Duration
		sentAgo  time.Duration // Job.Received this long before Submit
		want     time.Duration // every token's lateness
		behind   time.Duration // Behind between two decode steps
	}{
		{"keeps up", "dsv4-pd", 0, 0, 0, 0},
		{"step overhead, disaggregated", "dsv4-pd", overhead, 0, 2 * overhead, overhead},
		{"step overhead, colocated", "vllm-llama3-8b-h100", overhead, 0, overhead, 0},
		{"late to Submit", "dsv4-pd", 0, 3 * time.Second, 3 * time.Second, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := clock.Real()
				prof, err := LookupProfile(tc.profile)
				require.NoError(t, err)
				e, err := NewEngine(clk, prof, nil)
				require.NoError(t, err)
				e.overhead = tc.overhead
				e.Start()
				defer e.Stop()
				job := Job{PromptTokens: 1000, MaxTokens: 50, IgnoreEOS: true, Key: 1}
				if tc.sentAgo > 0 {
					job.Received = clk.Now().Add(-tc.sentAgo)
				}
				g, err := e.Submit(job)
				require.NoError(t, err)
				behind := readAll(t, e, g)

				s := e.Lag().Stats()
				assert.Equal(t, int64(50), s.N, "one observation per delivery")
				assert.Equal(t, tc.want, s.Max, "latest token")
				assert.Equal(t, tc.want, s.P50, "median token")
				assert.Equal(t, tc.behind, behind, "how far behind the engine is while it decodes")
				synctest.Wait()
				assert.Zero(t, e.Behind(), "an idle engine is behind nothing")
			})
		})
	}
}

// TestLagCarriesOverAPause: a stall-stream pause is scheduled from the clock's now, so the
// lateness a request has when it pauses carries over the pause: the tokens after it are late by
// that plus the overhead of the step they come in (3 ms), not on time again, and the pause
// itself, which the model has, counts for nothing.
func TestLagCarriesOverAPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := ParseFaults([]string{"stall-stream"}, []string{"fraction=1", "duration=30s"}, 1)
		require.NoError(t, err)
		e, err := NewEngine(clock.Real(), DSV4PD(), f)
		require.NoError(t, err)
		e.overhead = time.Millisecond
		e.Start()
		defer e.Stop()
		g, err := e.Submit(Job{PromptTokens: 1000, MaxTokens: 50, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		require.Positive(t, g.Plan.StallAt, "the request pauses")
		readAll(t, e, g)
		s := e.Lag().Stats()
		assert.Equal(t, 3*time.Millisecond, s.Max, "after the pause")
		assert.Contains(t, []time.Duration{2 * time.Millisecond, 3 * time.Millisecond}, s.P50, "before the pause: the prefill's overhead and the step's")
	})
}

// TestLagOfABacklog: a reader that falls behind delivers its backlog as late as its oldest
// token waited — half a second here, less the one step after the first token — not as late as
// its newest, which is just out.
func TestLagOfABacklog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		e, err := NewEngine(clk, DSV4PD(), nil)
		require.NoError(t, err)
		e.Start()
		defer e.Stop()
		g, err := e.Submit(Job{PromptTokens: 1000, MaxTokens: 200, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		ctx := context.Background()
		_, _, err = g.Next(ctx, 1)
		require.NoError(t, err)
		e.Delivered(g)
		require.NoError(t, clk.Sleep(ctx, 500*time.Millisecond)) // the reader does not run
		n, _, err := g.Next(ctx, 1000)
		require.NoError(t, err)
		require.Greater(t, n, 10, "a backlog")
		e.Delivered(g)
		step := DSV4PD().DecodeStep(1, 1001)
		assert.InDelta(t, (500*time.Millisecond - step).Seconds(), e.Lag().Stats().Max.Seconds(), step.Seconds()/2)
		readAll(t, e, g)
	})
}

// TestBehindCountsQueuedRequests: a request that reached Submit 3 s after its client sent it is
// that far behind before any loop takes it.
func TestBehindCountsQueuedRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, name := range []string{"dsv4-pd", "vllm-llama3-8b-h100"} {
			clk := clock.Real()
			prof, err := LookupProfile(name)
			require.NoError(t, err)
			e, err := NewEngine(clk, prof, nil)
			require.NoError(t, err)
			_, err = e.Submit(Job{PromptTokens: 1000, Key: 1, Received: clk.Now().Add(-3 * time.Second)})
			require.NoError(t, err)
			assert.Equal(t, 3*time.Second, e.Behind(), name)
		}
	})
}

// TestBehindGrowsWhileALoopIsLate: a loop that does not get to run — its step overhead of 1 s,
// longer than a decode step, standing in for a process starved of CPU — is read falling
// further behind while it is stuck, not as it stood at its last step.
func TestBehindGrowsWhileALoopIsLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		e := startLateEngine(t, clk, nil)
		g, err := e.Submit(Job{PromptTokens: 1000, MaxTokens: 3, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		ctx := context.Background()
		_, _, err = g.Next(ctx, 1)
		require.NoError(t, err)
		synctest.Wait() // the loop is in the overhead after its next step's end was due
		before := e.Behind()
		require.NoError(t, clk.Sleep(ctx, 100*time.Millisecond))
		assert.Positive(t, before)
		assert.Equal(t, 100*time.Millisecond, e.Behind()-before, "live")
		readAll(t, e, g)
	})
}

// startLateEngine starts an engine of the vLLM-style profile with faults whose every step
// ends 1 s late (a step overhead longer than a decode step, standing in for a process starved
// of CPU), stopped when the test ends.
func startLateEngine(t *testing.T, clk *clock.Clock, faults *Faults) *Engine {
	t.Helper()
	prof, err := LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	e, err := NewEngine(clk, prof, faults)
	require.NoError(t, err)
	e.overhead = time.Second
	e.Start()
	t.Cleanup(e.Stop)
	return e
}

// TestNewLatenessIsWhatAWindowAdds: a request that reached Submit 3 s late brings all 3 s of
// lateness into the window of its first deliveries; in the next window its tokens are as late
// as before, no later, and that window gained nothing; a reader that then does not run for
// half a second makes the window after gain that much.
func TestNewLatenessIsWhatAWindowAdds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		e, err := NewEngine(clk, DSV4PD(), nil)
		require.NoError(t, err)
		e.Start()
		defer e.Stop()
		assert.Zero(t, e.NewLateness(), "nothing delivered yet")
		g, err := e.Submit(Job{PromptTokens: 1000, MaxTokens: 200, IgnoreEOS: true, Key: 1, Received: clk.Now().Add(-3 * time.Second)})
		require.NoError(t, err)
		ctx := context.Background()
		deliver := func(n int) {
			for range n {
				_, _, err := g.Next(ctx, 1)
				require.NoError(t, err)
				e.Delivered(g)
			}
		}
		deliver(10)
		assert.InEpsilon(t, 3.0, e.NewLateness().Seconds(), 0.13, "the first deliveries: all of their lateness is new")
		deliver(10)
		assert.Less(t, e.NewLateness(), time.Millisecond, "as late as before: nothing new")
		require.NoError(t, clk.Sleep(ctx, 500*time.Millisecond)) // the reader does not run
		_, _, err = g.Next(ctx, 1000)
		require.NoError(t, err)
		e.Delivered(g)
		assert.InEpsilon(t, 0.5, e.NewLateness().Seconds(), 0.13, "the backlog came half a second later than before")
		readAll(t, e, g)
	})
}
