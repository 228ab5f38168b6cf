package agents

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/workloads"
)

// reasoningScript is a reasoning model's answer: headers at 0.5 s, the role at 1 s, thinking
// from 2 s, content from 5 s, the end at 5.2 s (simulated).
func reasoningScript(field string) []step {
	ms := time.Millisecond
	return []step{
		{after: 500 * ms, data: roleFrame()},
		{after: time.Second, data: reasoningFrame(field, "Let me")},
		{after: 100 * ms, data: reasoningFrame(field, " think…")},
		{after: 2900 * ms, data: contentFrame("Hello")},
		{after: 100 * ms, data: contentFrame(" \"world\"\n")},
		{after: 100 * ms, data: finishFrame("stop")},
		{data: usageFrame(1200, 42, 30, 1024)},
		{raw: doneRaw},
	}
}

func testRequest() Request {
	return Request{Model: "m", MaxTokens: 100,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}}}
}

// TestCallReasoningAwareTimings: TTFT is the first reasoning token, TTFTContent the first
// content token later, whichever field name the server uses for reasoning; the content text
// excludes the reasoning; usage is read from the final chunk.
func TestCallReasoningAwareTimings(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := clock.Real()
				s := &script{clk: clk, headerDelay: 500 * time.Millisecond, steps: reasoningScript(field)}
				env := newTestEnv(t, clk, s)
				defer env.close()
				obs := &recorder{start: clk.Now()}
				res := env.client.Call(t.Context(), testRequest(), obs)
				assertReasoningResult(t, res, obs.start, 1)
				assert.Equal(t, []event{
					{"headers", 500 * time.Millisecond},
					{"chunk", time.Second},
					{"chunk", 2 * time.Second}, {"first_reasoning", 2 * time.Second},
					{"chunk", 2100 * time.Millisecond},
					{"chunk", 5 * time.Second}, {"first_content", 5 * time.Second},
					{"chunk", 5100 * time.Millisecond},
					{"chunk", 5200 * time.Millisecond},
					{"chunk", 5200 * time.Millisecond},
					{"chunk", 5200 * time.Millisecond},
				}, obs.events)
			})
		})
	}
}

// assertReasoningResult checks the Result of reasoningScript, timings within tol.
func assertReasoningResult(t *testing.T, res Result, start time.Time, tol time.Duration) {
	t.Helper()
	assertReasoningAnswer(t, res, start, tol)
	assert.Equal(t, 8, res.Chunks, "Chunks (role, 2 reasoning, 2 content, finish, usage, [DONE])")
	assert.Equal(t, 2, res.FirstTokenChunk, "FirstTokenChunk (the first reasoning delta, after the role)")
	assert.InDelta(t, 3200*time.Millisecond/6, res.ITL(), float64(tol),
		"ITL: first token at 2 s to [DONE] at 5.2 s, over the 6 gaps between frames 2 and 8")
}

// assertReasoningAnswer checks what any stream of reasoningScript's answer gives, whatever
// its framing: timings within tol, texts, usage.
func assertReasoningAnswer(t *testing.T, res Result, start time.Time, tol time.Duration) {
	t.Helper()
	require.NoError(t, res.Err)
	at := func(d time.Duration, got time.Time, name string) {
		assert.InDelta(t, d, got.Sub(start), float64(tol), "%s = start + %v; want start + %v", name, got.Sub(start), d)
	}
	at(0, res.Sent, "Sent")
	at(500*time.Millisecond, res.Headers, "Headers")
	at(2*time.Second, res.FirstReasoning, "FirstReasoning")
	at(5*time.Second, res.FirstContent, "FirstContent")
	at(5200*time.Millisecond, res.Last, "Last")
	at(5200*time.Millisecond, res.End, "End")
	assert.InDelta(t, 2*time.Second, res.TTFT, float64(tol), "TTFT")
	assert.InDelta(t, 5*time.Second, res.TTFTContent, float64(tol), "TTFTContent")
	assert.InDelta(t, 2900*time.Millisecond, res.MaxGap, float64(tol), "MaxGap")
	assert.Equal(t, 4, res.TokenChunks, "TokenChunks (2 reasoning, 2 content)")
	assert.Equal(t, "Hello \"world\"\n", res.Content)
	assert.Equal(t, len("Let me think…")-2, res.ReasoningChars, "ReasoningChars counts code points")
	assert.Equal(t, 14, res.ContentChars)
	assert.Equal(t, events.FinishStop, res.FinishReason)
	assert.Equal(t, "assistant", res.Role)
	assert.Equal(t, Usage{Prompt: 1200, Completion: 42, Reasoning: 30, Cached: 1024}, res.Usage)
	assert.Equal(t, events.ClassNone, res.Class)
	assert.Equal(t, 200, res.Status)
	assert.Equal(t, NoTimeout, res.Timeout)
	assert.Equal(t, events.RequestSuccess, res.Outcome().Kind)
}

// TestCallSpeedupKeepsSimulatedTimings: at --speedup 20 the same stream takes 1/20 of the wall
// time and reports the same simulated timings.
func TestCallSpeedupKeepsSimulatedTimings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.New(20)
		require.NoError(t, err)
		s := &script{clk: clk, headerDelay: 500 * time.Millisecond, steps: reasoningScript("reasoning_content")}
		env := newTestEnv(t, clk, s)
		defer env.close()
		start, wall := clk.Now(), time.Now()
		res := env.client.Call(t.Context(), testRequest(), nil)
		assertReasoningResult(t, res, start, time.Microsecond)
		assert.InDelta(t, 5200*time.Millisecond/20, time.Since(wall), float64(time.Microsecond), "wall time")
	})
}

// TestCallTTFTCountsReasoning: a reasoning model that thinks for 10 s before any content does
// not trip a 3 s TTFT timeout, because its first reasoning token came at 2 s.
func TestCallTTFTCountsReasoning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		s := &script{clk: clk, steps: []step{
			{after: 2 * time.Second, data: reasoningFrame("reasoning", "hmm")},
			{after: 8 * time.Second, data: contentFrame("ok")},
			{raw: doneRaw},
		}}
		env := newTestEnv(t, clk, s)
		defer env.close()
		req := testRequest()
		req.Timeouts = workloads.Timeouts{TTFT: 3 * time.Second, Idle: 9 * time.Second}
		res := env.client.Call(t.Context(), req, nil)
		require.NoError(t, res.Err)
		assert.Equal(t, 2*time.Second, res.TTFT)
		assert.Equal(t, 10*time.Second, res.TTFTContent)
		assert.Equal(t, "ok", res.Content)
	})
}

// TestCallSendsRequestFields: the body carries the model, max_tokens, reasoning_effort,
// stream_options.include_usage, and ignore_eos only when asked for.
func TestCallSendsRequestFields(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			clk := clock.Real()
			s := &script{clk: clk, steps: []step{{data: contentFrame("x")}, {raw: doneRaw}}}
			env := newTestEnv(t, clk, s)
			defer env.close()
			req := testRequest()
			req.IgnoreEOS, req.ReasoningEffort, req.MaxTokens = ignore, "high", 64
			res := env.client.Call(t.Context(), req, nil)
			require.NoError(t, res.Err)
			body := s.requestBody
			assert.Equal(t, "m", body["model"])
			assert.Equal(t, 64.0, body["max_tokens"])
			assert.Equal(t, "high", body["reasoning_effort"])
			assert.Equal(t, true, body["stream"])
			assert.Equal(t, map[string]any{"include_usage": true}, body["stream_options"])
			if ignore {
				assert.Equal(t, true, body["ignore_eos"], "IgnoreEOS=true: ignore_eos in %v", body)
			} else {
				assert.NotContains(t, body, "ignore_eos", "IgnoreEOS=false")
			}
		})
	}
}

// TestCallCancelled: cancelling the caller's context mid-stream ends the call at once with
// events.ClassCancelled, and the server sees the client go away.
func TestCallCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		s := &script{clk: clk, steps: []step{{after: time.Second, data: contentFrame("a")}, {hang: true}}}
		env := newTestEnv(t, clk, s)
		defer env.close()
		ctx, cancel := context.WithCancel(t.Context())
		clk.AfterFunc(3*time.Second, cancel)
		start := clk.Now()
		res := env.client.Call(ctx, testRequest(), nil)
		assert.Equal(t, events.ClassCancelled, res.Class)
		assert.ErrorIs(t, res.Err, context.Canceled)
		assert.Equal(t, 3*time.Second, res.End.Sub(start), "End")
		assert.Equal(t, "a", res.Content, "partial content is kept")
		assert.Equal(t, events.RequestCancelled, res.Outcome().Kind)
		synctest.Wait()
		assert.True(t, s.sawDisconnect(), "the server saw the disconnect")
	})
}

// TestCallCancelledBeforeHeaders: cancellation while waiting for headers is prompt too.
func TestCallCancelledBeforeHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		s := &script{clk: clk, headerDelay: time.Hour}
		env := newTestEnv(t, clk, s)
		defer env.close()
		ctx, cancel := context.WithCancel(t.Context())
		clk.AfterFunc(2*time.Second, cancel)
		start := clk.Now()
		res := env.client.Call(ctx, testRequest(), nil)
		assert.Equal(t, events.ClassCancelled, res.Class)
		assert.Equal(t, 2*time.Second, res.End.Sub(start))
		assert.Zero(t, res.Status)
		synctest.Wait()
		assert.True(t, s.sawDisconnect(), "the server saw the disconnect")
	})
}
