package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
)

// startEngine starts an engine on p with the faults (names, then name.key=value parameters)
// in a synctest bubble, stopped when the test ends.
func startEngine(t *testing.T, p *Profile, faults ...string) (*Engine, *clock.Clock) {
	t.Helper()
	var names, params []string
	for _, f := range faults {
		if strings.Contains(f, "=") {
			params = append(params, f)
		} else {
			names = append(names, f)
		}
	}
	fs, err := ParseFaults(names, params, 1)
	require.NoError(t, err)
	clk, err := clock.New(1)
	require.NoError(t, err)
	e, err := NewEngine(clk, p, fs)
	require.NoError(t, err)
	e.Start()
	t.Cleanup(e.Stop)
	return e, clk
}

// tightKV is dsv4-pd with a decode KV pool of one full context, 163 840 tokens.
func tightKV() *Profile {
	p := DSV4PD()
	p.KVCapacityTokens = p.MaxContextTokens
	return p
}

// TestPDPreallocBeforePrefill checks SGLang's PD order: the decode engine reserves a request's
// KV before its prefill runs. While a running request holds most of the decode KV, a second
// one waits in the prealloc queue (counted by both SGLang prealloc gauges) and is not
// prefilled; after 300 s it is aborted with SGLang's bootstrap timeout.
func TestPDPreallocBeforePrefill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := tightKV()
		p.DecodeBase = 30 * time.Millisecond // the big request decodes for longer than 300 s
		e, clk := startEngine(t, p)
		big, err := e.Submit(Job{PromptTokens: 150_000, MaxTokens: 13_000, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		_, _, err = big.Next(context.Background(), 1)
		require.NoError(t, err, "the big request decodes")

		start := clk.Now()
		g, err := e.Submit(Job{PromptTokens: 20_000, MaxTokens: 10, Key: 2})
		require.NoError(t, err)
		time.Sleep(10 * time.Second)
		s := e.Stats()
		assert.Equal(t, 1, s.PreallocQueued, "waiting for its decode KV")
		assert.Zero(t, s.PrefillQueued, "not prefilled before its KV is reserved")
		assert.Equal(t, int64(150_000), s.PromptTokens-20_000, "counted on arrival")
		assert.Equal(t, 1, s.Logged.DecodePrealloc, "the decode prealloc gauge, logged every 40 decode steps")

		n, _, err := g.Next(context.Background(), 1)
		assert.Zero(t, n)
		var ab *Aborted
		require.True(t, errors.As(err, &ab), "Next = %v; want an *Aborted", err)
		assert.Equal(t, StageBootstrapping, ab.Stage)
		assert.Equal(t, 300*time.Second, clk.Since(start), "aborted after bootstrap_timeout")
		assert.Contains(t, err.Error(), "Prefill bootstrap failed for request rank=0 with exception KVTransferError(bootstrap_room=2): Request 2 timed out after 300.0s in KVPoll.Bootstrapping")
		time.Sleep(time.Second)
		s = e.Stats()
		assert.Zero(t, s.PreallocQueued)
		assert.Equal(t, int64(1), s.TimedOut)
		assert.Equal(t, int64(1), s.TimedOutBootstrap)
		assert.Equal(t, int64(1), s.Aborted)
		e.Cancel(big)
	})
}

// TestPDPreallocThenPrefill: once the decode KV frees, the waiting request is reserved and
// prefilled, in that order, and completes.
func TestPDPreallocThenPrefill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, _ := startEngine(t, tightKV())
		big, err := e.Submit(Job{PromptTokens: 150_000, MaxTokens: 200, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		_, _, err = big.Next(context.Background(), 1)
		require.NoError(t, err)
		g, err := e.Submit(Job{PromptTokens: 20_000, MaxTokens: 10, IgnoreEOS: true, Key: 2})
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
		assert.Equal(t, 1, e.Stats().PreallocQueued)
		_, err = drain(e.clk, big, e.clk.Now())
		require.NoError(t, err)
		_, err = drain(e.clk, g, e.clk.Now())
		require.NoError(t, err, "reserved once the big request finished, then prefilled and decoded")
		s := e.Stats()
		assert.Equal(t, int64(2), s.Finished)
		assert.Zero(t, s.TimedOut)
		assert.Zero(t, s.KVUsedTokens)
	})
}

// TestPDWaitingTimeout: a request whose KV has not reached the decode engine 300 s after its
// reservation (here a prefill slowed to 4 ms a token: 400 s for 100 k tokens) is aborted
// with SGLang's waiting timeout, and its reserved KV freed.
func TestPDWaitingTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := DSV4PD()
		p.PrefillPerToken = 4 * time.Millisecond
		e, clk := startEngine(t, p)
		start := clk.Now()
		g, err := e.Submit(Job{PromptTokens: 100_000, MaxTokens: 10, Key: 1})
		require.NoError(t, err)
		_, _, err = g.Next(context.Background(), 1)
		assert.True(t, isAborted(err, StageWaitingForInput), "Next = %v; want the waiting timeout", err)
		assert.Equal(t, 300*time.Second, clk.Since(start))
		assert.Contains(t, err.Error(), "Decode transfer failed for request rank=0 with exception KVTransferError(bootstrap_room=1): Request 1 timed out after 300.0s in KVPoll.WaitingForInput")
		time.Sleep(100 * time.Second) // the prefill step in progress ends
		s := e.Stats()
		assert.Zero(t, s.KVUsedTokens, "the reserved KV is freed")
		assert.Zero(t, s.PrefillQueued)
		assert.Equal(t, int64(1), s.Aborted)
	})
}

// TestAbortDelay: a disconnect frees the request's slot and KV after the profile's
// abort_delay (2 s on dsv4-pd, as SGLang), not at once.
func TestAbortDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, _ := startEngine(t, DSV4PD())
		g, err := e.Submit(Job{PromptTokens: 200, MaxTokens: 5000, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		_, _, err = g.Next(context.Background(), 1)
		require.NoError(t, err)
		e.Cancel(g)
		time.Sleep(1990 * time.Millisecond)
		assert.Equal(t, 1, e.Stats().DecodeRunning, "held during the abort delay")
		time.Sleep(50 * time.Millisecond)
		s := e.Stats()
		assert.Zero(t, s.DecodeRunning, "freed after it")
		assert.Zero(t, s.KVUsedTokens)
		assert.Equal(t, int64(1), s.Aborted)
	})
}

// TestDecodeIgnoresDisconnect: with decode_ignores_disconnect (a PD router that does not pass
// the disconnect on), a request already in decode when its abort comes runs on to its end
// after its client has gone; one still in prefill is aborted.
func TestDecodeIgnoresDisconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := DSV4PD()
		p.DecodeIgnoresDisconnect, p.AbortDelay = true, 0
		e, _ := startEngine(t, p)
		decoding, err := e.Submit(Job{PromptTokens: 200, MaxTokens: 500, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		_, _, err = decoding.Next(context.Background(), 1)
		require.NoError(t, err)
		prefilling, err := e.Submit(Job{PromptTokens: 200, MaxTokens: 500, IgnoreEOS: true, Key: 2})
		require.NoError(t, err)
		e.Cancel(decoding)
		e.Cancel(prefilling)
		time.Sleep(3 * time.Second)
		s := e.Stats()
		assert.Equal(t, 1, s.DecodeRunning, "the request in decode runs on")
		assert.Equal(t, int64(1), s.Aborted, "the one in prefill is aborted")
		time.Sleep(30 * time.Second)
		s = e.Stats()
		assert.Equal(t, int64(1), s.Finished, "the zombie ran to its end")
		assert.Equal(t, 500, decoding.Produced())
		assert.Zero(t, s.KVUsedTokens)
	})
}

// retractionRun decodes two 80 k-token prompts on a decode KV pool of 163 840 tokens: the
// pool overflows after ≈ 1 900 output tokens each and the newer request is retracted. It
// returns both generations' token gaps.
func retractionRun(t *testing.T, e *Engine) (first, second []time.Duration, err1, err2 error) {
	a, err := e.Submit(Job{PromptTokens: 80_000, MaxTokens: 3000, IgnoreEOS: true, Key: 1})
	require.NoError(t, err)
	b, err := e.Submit(Job{PromptTokens: 80_000, MaxTokens: 3000, IgnoreEOS: true, Key: 2})
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		first, err1 = drain(e.clk, a, e.clk.Now())
		close(done)
	}()
	second, err2 = drain(e.clk, b, e.clk.Now())
	<-done
	return first, second, err1, err2
}

// TestRetractionRecompute: a retracted request loses its KV; when it runs again it first
// recomputes its whole context (prompt plus output so far) in prefill chunks, which shows as
// one long gap in its stream.
func TestRetractionRecompute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, _ := startEngine(t, tightKV())
		_, second, err1, err2 := retractionRun(t, e)
		require.NoError(t, err1)
		require.NoError(t, err2)
		s := e.Stats()
		assert.Equal(t, int64(1), s.Retracted)
		assert.Greater(t, s.RecomputedTokens, int64(80_000+1_000), "prompt plus the output so far")
		assert.Less(t, s.RecomputedTokens, int64(80_000+3_000))
		// The recompute: 8 192-token chunks, each a prefill step plus a decode step's base.
		p := e.Profile()
		n := int(s.RecomputedTokens)
		var recompute time.Duration
		for c := 0; c < n; c += p.PrefillChunkTokens {
			recompute += p.MixedStep(0, 0, []int{min(p.PrefillChunkTokens, n-c)}, []int{c})
		}
		longest := slices.Max(second)
		t.Logf("recomputed %d tokens in %s; the retracted stream's longest gap %s", n, recompute, longest)
		assert.Greater(t, longest, recompute, "the gap holds the recompute")
		assert.Equal(t, int64(2), s.Finished)
		assert.Zero(t, s.KVUsedTokens)
	})
}

// TestRetractCrash: with the retract-crash fault the first retraction kills the scheduler:
// both streams stop, silent, and every later request is refused as Unavailable.
func TestRetractCrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, _ := startEngine(t, tightKV(), "retract-crash")
		a, err := e.Submit(Job{PromptTokens: 80_000, MaxTokens: 3000, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		b, err := e.Submit(Job{PromptTokens: 80_000, MaxTokens: 3000, IgnoreEOS: true, Key: 2})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		_, errA := drainCtx(ctx, a)
		_, errB := drainCtx(ctx, b)
		assert.ErrorIs(t, errA, context.DeadlineExceeded, "the stream stopped, silent")
		assert.ErrorIs(t, errB, context.DeadlineExceeded, "the stream stopped, silent")
		s := e.Stats()
		assert.True(t, s.Crashed)
		assert.Equal(t, int64(1), s.Retracted)
		assert.Less(t, a.Produced(), 3000)
		_, err = e.Submit(Job{PromptTokens: 10, Key: 3})
		var rej *Rejection
		require.True(t, errors.As(err, &rej), "Submit after the crash = %v; want a *Rejection", err)
		assert.Equal(t, Unavailable, rej.Reason)
	})
}

// drainCtx reads a generation until its end or ctx's.
func drainCtx(ctx context.Context, g *Gen) (int, error) {
	total := 0
	for {
		n, done, err := g.Next(ctx, 64)
		total += n
		if err != nil || done {
			return total, err
		}
	}
}
