package calibrate

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/engine"
)

// TestClientReadsServerTimings checks that the client keeps llama-server's own account of a
// prompt's work from the last chunk of its stream (the shape tools/server/server-task.cpp
// writes: an empty choices list, usage, then timings).
func TestClientReadsServerTimings(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, frame := range []string{
			`{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk"}`,
			`{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" hello"}}],"object":"chat.completion.chunk"}`,
			`{"choices":[{"finish_reason":"length","index":0,"delta":{}}],"object":"chat.completion.chunk"}`,
			`{"choices":[],"object":"chat.completion.chunk","usage":{"completion_tokens":1,"prompt_tokens":318,"total_tokens":319},` +
				`"timings":{"cache_n":291,"prompt_n":27,"prompt_ms":12.412,"prompt_per_token_ms":0.46,"prompt_per_second":2175.3,"predicted_n":1,"predicted_ms":0.01}}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", frame)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer s.Close()
	clk, err := clock.New(1)
	require.NoError(t, err)
	c := &Client{URL: s.URL, Model: "m", HTTP: s.Client(), Clock: clk}
	o := c.Send(context.Background(), Request{Messages: []string{"hi"}, MaxTokens: 1})
	require.True(t, o.OK(), o.Err)
	require.NotNil(t, o.Server)
	assert.Equal(t, ServerTimings{Computed: 27, Cached: 291, Prompt: 12412 * time.Microsecond}, *o.Server)
	assert.Equal(t, 318, o.PromptTokens)
}

// promptData is a prompt-length experiment against a colocated server whose prompt compute is
// 8 ms a chunk of 2 048 + 17 µs/token + 60 ns/token² and whose TTFT adds 4 ms + 2 µs a prompt
// token of its own work outside the steps; with timed, each request carries the server's prompt
// time, as llama-server's do. Each of three repeats varies by a few per cent, as a real
// server's do, and one request met a slow moment of 30 ms.
func promptData(timed bool) *Data {
	d := &Data{}
	start := time.Unix(1000, 0)
	for _, n := range []int{60, 250, 500, 1000, 2000, 3000, 4500} {
		m := Measured{Point: Point{Exp: ExpPrompt, Batch: 1, Prompt: n, Output: 4, Repeats: 3}}
		for rep := range 3 {
			cached := 5.0 // the chat template's first tokens, as llama-server's cache_n shows
			c := float64(n) - cached
			compute := 8e-3*math.Ceil(c/2048) + 17e-6*c + 60e-9*c*(cached+c/2)
			compute *= 1 + 0.02*float64(rep-1)
			ttft := compute + (4e-3+2e-6*float64(n))*(1+0.05*float64(rep-1))
			if n == 1000 && rep == 0 {
				ttft += 30e-3
			}
			o := Obs{Start: start, PromptTokens: n, CompletionTokens: 4}
			o.Chunks = []time.Time{start.Add(seconds(ttft))}
			o.Done = o.Chunks[0]
			if timed {
				o.Server = &ServerTimings{Computed: int(c), Cached: int(cached), Prompt: seconds(compute)}
			}
			m.Runs = append(m.Runs, []Obs{o})
		}
		d.Points = append(d.Points, m)
	}
	return d
}

// withTurns adds next turns to d: 300 new tokens over a cached context of 1 000, 4 000 and
// 8 000, computed at 90 ns a (new × cached) pair where a fresh prompt's own pairs cost 60 (as
// llama-server's CPU kernels price a short batch's attention over a long context), three
// repeats each.
func withTurns(d *Data) *Data {
	start := time.Unix(2000, 0)
	for _, cached := range []float64{1000, 4000, 8000} {
		m := Measured{Point: Point{Exp: ExpTurn, Batch: 1, Prompt: int(cached), Output: 4, Repeats: 3}}
		for rep := range 3 {
			c := 300.0
			compute := (8e-3 + 17e-6*c + 60e-9*c*c/2 + 90e-9*c*cached) * (1 + 0.02*float64(rep-1))
			ttft := compute + 4e-3 + 2e-6*(c+cached)
			o := Obs{Start: start, PromptTokens: int(c + cached), CompletionTokens: 4,
				Chunks: []time.Time{start.Add(seconds(ttft))}, Server: &ServerTimings{Computed: int(c), Cached: int(cached), Prompt: seconds(compute)}}
			o.Done = o.Chunks[0]
			m.Runs = append(m.Runs, []Obs{{}, o})
		}
		d.Points = append(d.Points, m)
	}
	return d
}

// TestPrefillPricesTheNextTurn checks that the next turns take part in the compute fit: where a
// cached context costs a turn more than a fresh prompt's own context costs it, the fit with
// them predicts the turn's first token closer than the fit of fresh prompts alone (one
// attention coefficient cannot price both exactly: 14 % off against 26 %), and its errors say
// how close, per experiment.
func TestPrefillPricesTheNextTurn(t *testing.T) {
	fresh := &Fit{Profile: colocatedBase(t)}
	fresh.prefill(promptData(true), 1, 2048)
	both := &Fit{Profile: colocatedBase(t)}
	both.prefill(withTurns(promptData(true)), 1, 2048)
	// A turn of 300 new tokens over 4 000 cached.
	truth := 8e-3 + 17e-6*300 + 60e-9*300*150 + 90e-9*300*4000 + 4e-3 + 2e-6*4300
	next := func(p *engine.Profile) float64 {
		return (p.Admission(4300) + p.PrefillStep([]int{300}, []int{4000}, 0) + p.DecodeBase).Seconds()
	}
	t.Logf("a turn's first token: truth %.2f ms, fitted with turns %.2f ms, without %.2f ms", truth*1e3, next(both.Profile)*1e3, next(fresh.Profile)*1e3)
	assert.Less(t, math.Abs(next(both.Profile)/truth-1), 0.75*math.Abs(next(fresh.Profile)/truth-1), "the turns cut the error by a quarter at least")
	var whats []string
	for _, e := range both.Errors {
		whats = append(whats, e.Exp+": "+e.What)
	}
	assert.Equal(t, []string{"prompt-length: server prompt time at batch 1", "prompt-length: TTFT at batch 1",
		"next-turn: server prompt time of the turn", "next-turn: TTFT of the turn"}, whats)
	assert.Contains(t, strings.Join(paramSources(both), "\n"), "and of 9 next turns over a cached context")
}

// colocatedBase is a colocated-mixed base of llama-server's shape: its chunk 2 048, its fixed
// step cost 1 ms.
func colocatedBase(t *testing.T) *engine.Profile {
	p, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	b := *p
	b.PrefillChunkTokens, b.DecodeBase = 2048, time.Millisecond
	return &b
}

// TestPrefillFitsTheServersOwnPromptTime checks that where the server reports its prompt time,
// the compute terms are fitted to it and the rest of TTFT is the request overhead, its fixed
// part and its part per prompt token, the slow request left out; and that without it, the
// work outside the steps is charged to the compute terms, as before (the per-chunk cost takes
// most of it, which a prompt's short continuation then pays in every chunk).
func TestPrefillFitsTheServersOwnPromptTime(t *testing.T) {
	f := &Fit{Profile: colocatedBase(t)}
	f.prefill(promptData(true), 1, 2048)
	p := f.Profile
	t.Logf("timed: overhead %s + %s/token, per chunk %s, per token %s, attention %.4g ns", p.RequestOverhead, p.RequestOverheadPerToken, p.PrefillBase+p.DecodeBase, p.PrefillPerToken, p.PrefillAttnPerToken2Ns)
	within(t, "request_overhead", 4e-3, p.RequestOverhead.Seconds(), 0.05)
	within(t, "request_overhead_per_token", 2e-6, p.RequestOverheadPerToken.Seconds(), 0.05)
	within(t, "per chunk", 8e-3, (p.PrefillBase + p.DecodeBase).Seconds(), 0.1)
	within(t, "prefill_per_token", 17e-6, p.PrefillPerToken.Seconds(), 0.1)
	within(t, "prefill_attn_per_token2_ns", 60, p.PrefillAttnPerToken2Ns, 0.05)
	require.Len(t, f.Errors, 2)
	assert.Equal(t, "server prompt time at batch 1", f.Errors[0].What)
	assert.Contains(t, strings.Join(paramSources(f), "\n"), "1 slow request left out")

	untimed := &Fit{Profile: colocatedBase(t)}
	untimed.prefill(promptData(false), 1, 2048)
	q := untimed.Profile
	t.Logf("untimed: overhead %s, per chunk %s, per token %s, attention %.4g ns", q.RequestOverhead, q.PrefillBase+q.DecodeBase, q.PrefillPerToken, q.PrefillAttnPerToken2Ns)
	assert.Zero(t, q.RequestOverhead, "the base's")
	assert.Greater(t, (q.PrefillBase + q.DecodeBase).Seconds(), 10e-3, "the overhead is charged per chunk")
	assert.True(t, strings.Contains(strings.Join(untimed.Kept, "\n"), "request_overhead: the server reported no prompt time"), untimed.Kept)
	// A conversation's next turn: 170 new tokens after 1 000 cached, one chunk.
	truth := 8e-3 + 17e-6*170 + 60e-9*170*(1000+85) + 4e-3 + 2e-6*1170
	next := func(p *engine.Profile) float64 {
		return (p.Admission(1170) + p.PrefillStep([]int{170}, []int{1000}, 0) + p.DecodeBase).Seconds()
	}
	t.Logf("next turn's first token: truth %.2f ms, timed fit %.2f ms, untimed %.2f ms", truth*1e3, next(p)*1e3, next(q)*1e3)
	within(t, "next turn's first token, timed fit", truth, next(p), 0.05)
	assert.Greater(t, math.Abs(next(q)/truth-1), 0.05, "the untimed fit charges the overhead per chunk and per new token, not per prompt token")
}

// TestCalibrateTextlessServer calibrates against a server whose replies complete without any
// text (every token a part of a character, as a random-weight model's greedy output can be):
// each request fails with that reason, and calibrate stops, naming it, without a crash (the
// repeated-prefix probe indexed a pair of replies that had passed for answered).
func TestCalibrateTextlessServer(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}`+"\n\n")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"finish_reason":"length","delta":{}}]}`+"\n\n")
		fmt.Fprint(w, `data: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":2}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer s.Close()
	clk, err := clock.New(1)
	require.NoError(t, err)
	c := &Client{URL: s.URL, Model: "m", HTTP: s.Client(), Clock: clk}
	o := c.Send(context.Background(), Request{Messages: []string{"hi"}, MaxTokens: 2})
	assert.False(t, o.OK())
	assert.Equal(t, "the reply carried no text (2 tokens by its usage)", o.Err)
	_, err = Run(context.Background(), Options{Client: c, MaxConcurrency: 4, MaxPrompt: 4096, ChunkTokens: 2048, Repeats: 1, Budget: time.Minute, Seed: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the reply carried no text", "the error names why")
}

// paramSources lists the fitted keys, each with its source.
func paramSources(f *Fit) []string {
	var s []string
	for _, p := range f.Params {
		s = append(s, p.Key+": "+p.Source)
	}
	return s
}

// besideData is the turn-beside probe as a server with truth's steps would report it: each
// turn's prompt_ms is the mixed step that computed it beside the streams, whose KV is their
// prompt and the tokens they had streamed when it began; the context experiment adds batches
// whose last first tokens price the pool at batchNs.
func besideData(truth *engine.Profile, batchNs float64) *Data {
	at := time.Unix(0, 0)
	d := &Data{}
	for i, b := range []int{3, 7} {
		m := Measured{Point: Point{Exp: ExpTurnBeside, Batch: b, Prompt: 1024, Output: turnReply}}
		for rep := range 2 {
			streamed := 40 + 30*rep + 10*i
			kv := b * (1024 + streamed)
			computed, cached := 330+rep, 1024+turnReply
			step := truth.MixedStep(b, kv, []int{computed}, []int{cached})
			first := at.Add(time.Second)
			turn := Obs{Start: first.Add(-50 * time.Millisecond), Chunks: []time.Time{first}, PromptTokens: computed + cached,
				Server: &ServerTimings{Computed: computed, Cached: cached, Prompt: step}}
			run := []Obs{{Chunks: []time.Time{at}}, turn}
			for range b {
				chunks := make([]time.Time, streamed+5)
				for k := range chunks {
					// streamed of them before the step began, the rest after it
					if k < streamed {
						chunks[k] = first.Add(-step - time.Duration(streamed-k)*time.Millisecond)
					} else {
						chunks[k] = first.Add(time.Duration(k) * time.Microsecond)
					}
				}
				run = append(run, Obs{Request: Request{Estimate: 1024}, Chunks: chunks, Err: "stream cut before its end"})
			}
			m.Runs = append(m.Runs, run)
		}
		d.Points = append(d.Points, m)
	}
	batched := *truth
	batched.PrefillAttnPoolNs = batchNs
	for _, b := range []int{4, 8} {
		m := Measured{Point: Point{Exp: ExpContext, Batch: b, Prompt: 2048}}
		for range 2 {
			prompts := make([]int, b)
			for k := range prompts {
				prompts[k] = 2048
			}
			last, _ := batchFirstTokens(&batched, prompts)
			run := make([]Obs, b)
			for k := range run {
				run[k] = Obs{Start: at, Chunks: []time.Time{at.Add(last)}, PromptTokens: 2048}
			}
			m.Runs = append(m.Runs, run)
		}
		d.Points = append(d.Points, m)
	}
	return d
}

// TestPoolFromTurnsBesideStreams checks that turns beside decoding streams set
// prefill_attn_pool_ns where they identify it, over the context batches' estimate (a truth
// whose turns pay 30 ns a pair and whose fresh batches pay 10), that the batches' value is
// in the source, that both shapes' errors are reported; and that without the server's prompt
// time the batches set it.
func TestPoolFromTurnsBesideStreams(t *testing.T) {
	truth := colocatedBase(t)
	truth.Engine, truth.StepTokenBudget = engine.EngineColocatedMixed, 2048
	truth.PrefillAttnPoolNs = 30
	d := besideData(truth, 10)
	f := &Fit{Profile: func() *engine.Profile { p := *truth; p.PrefillAttnPoolNs = 0; return &p }()}
	f.prefillPool(d, 1)
	within(t, "prefill_attn_pool_ns", 30, f.Profile.PrefillAttnPoolNs, 0.01)
	src := strings.Join(paramSources(f), "\n")
	assert.Contains(t, src, "4 turns of a conversation beside 3–7 streams decoding")
	assert.Contains(t, src, "context batches of 2–8 prompts sent at once, beyond what the other terms predict alone: 10")
	require.Len(t, f.Errors, 2)
	assert.Equal(t, ExpContext, f.Errors[0].Exp)
	assert.Greater(t, f.Errors[0].RMS, 0.05, "the batches, priced at the turns' value, are off")
	assert.Equal(t, ExpTurnBeside, f.Errors[1].Exp)
	assert.Less(t, f.Errors[1].RMS, 0.01)

	for _, m := range d.Of(ExpTurnBeside) {
		for _, run := range m.Runs {
			run[1].Server = nil
		}
	}
	untimed := &Fit{Profile: func() *engine.Profile { p := *truth; p.PrefillAttnPoolNs = 0; return &p }()}
	untimed.prefillPool(d, 1)
	within(t, "prefill_attn_pool_ns from the batches", 10, untimed.Profile.PrefillAttnPoolNs, 0.01)
	require.Len(t, untimed.Errors, 1)
}

// idleData is the turn-after probe as a server with truth's steps would report it: each turn
// is computed alone over its cached context, after streams holding 1 024 + 16 tokens each
// ended, and its prompt_ms reads their KV when truth keeps idle slots; its TTFT adds truth's
// launch work on the streams' slots.
func idleData(truth *engine.Profile) *Data {
	d := &Data{}
	at := time.Unix(0, 0)
	for _, b := range []int{3, 7} {
		m := Measured{Point: Point{Exp: ExpTurnIdle, Batch: b, Prompt: 1024, Output: turnReply}}
		for rep := range 2 {
			computed, cached := 330+rep, 1024+turnReply
			step := truth.MixedStep(0, 0, []int{computed}, []int{cached})
			if truth.KVIdleSlots {
				step += time.Duration(truth.PrefillAttnPoolNs * float64(computed) * float64(b*(1024+16)))
			}
			run := []Obs{{Chunks: []time.Time{at}, PromptTokens: cached},
				{Start: at, Chunks: []time.Time{at.Add(step + truth.Admission(computed+cached) + time.Duration(b*(1024+16))*truth.LaunchPerIdleToken)}, PromptTokens: computed + cached,
					Server: &ServerTimings{Computed: computed, Cached: cached, Prompt: step}}}
			for range b {
				run = append(run, Obs{Chunks: []time.Time{at}, PromptTokens: 1024, CompletionTokens: 16})
			}
			m.Runs = append(m.Runs, run)
		}
		d.Points = append(d.Points, m)
	}
	return d
}

// TestIdleSlotsFromTurnsAfterStreams checks kv_idle_slots: true where a turn after streams
// that ended paid for their KV at the pool's rate, and prefill_attn_idle_ns that rate; false
// where it did not; kept false with its reason where no request reads another's KV.
func TestIdleSlotsFromTurnsAfterStreams(t *testing.T) {
	for _, keeps := range []bool{true, false} {
		truth := colocatedBase(t)
		truth.Engine, truth.StepTokenBudget, truth.PrefillAttnPoolNs, truth.KVIdleSlots = engine.EngineColocatedMixed, 2048, 30, keeps
		fitted := *truth
		fitted.KVIdleSlots = !keeps
		f := &Fit{Profile: &fitted}
		f.idleSlots(idleData(truth))
		assert.Equal(t, keeps, f.Profile.KVIdleSlots)
		src := strings.Join(paramSources(f), "\n")
		assert.Contains(t, src, "4 turns after streams that had ended (up to 7280 KV tokens between them)")
		if keeps {
			assert.Contains(t, src, "1.00× with it")
			within(t, "prefill_attn_idle_ns: the pool's price", 30, f.Profile.PrefillAttnIdleNs, 0.01)
		} else {
			assert.Contains(t, src, "1.00× the step priced without their KV")
			assert.Zero(t, f.Profile.PrefillAttnIdleNs)
		}
	}
	paged := colocatedBase(t)
	paged.Engine, paged.StepTokenBudget, paged.KVIdleSlots = engine.EngineColocatedMixed, 2048, true
	f := &Fit{Profile: paged}
	f.idleSlots(idleData(paged))
	assert.False(t, f.Profile.KVIdleSlots)
	assert.Contains(t, strings.Join(f.Kept, "\n"), "kv_idle_slots: prefill_attn_pool_ns is 0")
}

// TestIdleSlotsFromAPartialPrice checks kv_idle_slots where the server pays for part of the
// idle KV the pool's term prices, as this project's llama-server did (docs/calibrate.md §4):
// the turns cost more than their step alone and less than with the idle KV at the pool's
// full price, nearer the latter. True, with the price the turns paid, when the excess is beyond
// the prefill fit's error on turns alone and beyond 5 %; false when that error is as wide.
func TestIdleSlotsFromAPartialPrice(t *testing.T) {
	truth := colocatedBase(t)
	truth.Engine, truth.StepTokenBudget, truth.PrefillAttnPoolNs, truth.KVIdleSlots = engine.EngineColocatedMixed, 2048, 1, true
	d := idleData(truth) // the turns cost 1.20× their step alone: 0.76× at 5 ns
	for _, c := range []struct {
		name   string
		errs   []ExpError
		want   bool
		phrase string
	}{
		{"excess beyond the turns' error", []ExpError{{Exp: ExpTurn, What: "server prompt time of the turn", Points: 4, RMS: 0.03}}, true,
			"exceeds the larger of the prefill fit's error on the next-turn probe's server prompt time of the turn (3.0 %) and 5 %"},
		{"excess within the turns' error", []ExpError{{Exp: ExpTurn, What: "server prompt time of the turn", Points: 4, RMS: 9}}, false,
			"is within the larger of the prefill fit's error on the next-turn probe's server prompt time of the turn (900.0 %)"},
		{"the prompt lengths' error where no turn's", []ExpError{{Exp: ExpPrompt, What: "TTFT at batch 1", Points: 7, RMS: 0.01}}, true,
			"the prompt-length probe's TTFT at batch 1 (1.0 %)"},
		{"no error: the floor alone", nil, true, "exceeds 5 % (the prefill fit gave no error of a prompt alone)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fitted := *truth
			fitted.PrefillAttnPoolNs = 5 * truth.PrefillAttnPoolNs // a fifth of the price paid
			f := &Fit{Profile: &fitted, Errors: c.errs}
			f.idleSlots(d)
			assert.Equal(t, c.want, f.Profile.KVIdleSlots)
			src := strings.Join(paramSources(f), "\n")
			assert.Contains(t, src, "prompt time 1.20× the step priced without their KV, 0.76× with it")
			assert.Contains(t, src, c.phrase)
			if c.want {
				within(t, "prefill_attn_idle_ns: the truth's price of the idle KV", truth.PrefillAttnPoolNs, f.Profile.PrefillAttnIdleNs, 0.01)
				assert.Contains(t, src, "prefill_attn_idle_ns: the same 4 turns' prompt time beyond their step alone")
			} else {
				assert.Zero(t, f.Profile.PrefillAttnIdleNs)
			}
			assert.NoError(t, f.Profile.Validate())
		})
	}
}

// TestLaunchWorkFromTurnsAfterStreams checks launch_per_idle_token: recovered from the turns'
// TTFT less their prompt time where the truth does that work, 0 where it does not, the base's
// kept where the server reports no prompt time, and 0 on an engine that does not launch from
// its loop.
func TestLaunchWorkFromTurnsAfterStreams(t *testing.T) {
	for _, per := range []time.Duration{6 * time.Microsecond, 0} {
		truth := colocatedBase(t)
		truth.Engine, truth.StepTokenBudget, truth.LaunchPerIdleToken = engine.EngineColocatedMixed, 2048, per
		truth.RequestOverhead, truth.RequestOverheadPerToken = 3*time.Millisecond, 400
		fitted := *truth
		fitted.LaunchPerIdleToken = time.Millisecond
		f := &Fit{Profile: &fitted}
		f.launchWork(idleData(truth))
		assert.Equal(t, per, f.Profile.LaunchPerIdleToken)
		src := strings.Join(paramSources(f), "\n")
		assert.Contains(t, src, "launch_per_idle_token: 4 turns after streams that had ended (up to 7280 tokens in their slots)")
		if per == 0 {
			assert.Contains(t, src, "indistinguishable from 0")
		} else {
			assert.NotContains(t, src, "indistinguishable")
		}
	}
	truth := colocatedBase(t)
	truth.Engine, truth.StepTokenBudget, truth.LaunchPerIdleToken = engine.EngineColocatedMixed, 2048, 6*time.Microsecond
	untimed := idleData(truth)
	for _, m := range untimed.Points {
		for _, run := range m.Runs {
			run[1].Server = nil
		}
	}
	base := *truth
	base.LaunchPerIdleToken = 0
	f := &Fit{Profile: &base}
	f.launchWork(untimed)
	assert.Zero(t, f.Profile.LaunchPerIdleToken)
	assert.Contains(t, strings.Join(f.Kept, "\n"), "launch_per_idle_token: the server reports no prompt time of its own")
	parallel := *truth
	parallel.Engine, parallel.LaunchPerIdleToken = engine.EngineColocatedParallel, time.Millisecond
	f = &Fit{Profile: &parallel}
	f.launchWork(idleData(truth))
	assert.Zero(t, f.Profile.LaunchPerIdleToken)
	assert.Contains(t, strings.Join(f.Kept, "\n"), "launch_per_idle_token: engine colocated-parallel")
}

// TestPrefillLeavesOutASlowPromptTime: a prompt time three times its repeats' (a slow moment
// of the machine's) is left out of the prefill fit, which then recovers the truth's terms as
// without it.
func TestPrefillLeavesOutASlowPromptTime(t *testing.T) {
	d := promptData(true)
	o := &d.Points[3].Runs[1][0] // 1 000 tokens
	o.Server.Prompt *= 3
	o.Chunks[0] = o.Chunks[0].Add(2 * o.Server.Prompt / 3)
	o.Done = o.Chunks[0]
	f := &Fit{Profile: colocatedBase(t)}
	f.prefill(d, 1, 2048)
	p := f.Profile
	t.Logf("per chunk %s, per token %s, attention %.4g ns", p.PrefillBase+p.DecodeBase, p.PrefillPerToken, p.PrefillAttnPerToken2Ns)
	within(t, "per chunk", 8e-3, (p.PrefillBase + p.DecodeBase).Seconds(), 0.02)
	within(t, "prefill_per_token", 17e-6, p.PrefillPerToken.Seconds(), 0.02)
	within(t, "prefill_attn_per_token2_ns", 60, p.PrefillAttnPerToken2Ns, 0.02)
	assert.Contains(t, strings.Join(paramSources(f), "\n"), "1 slow request left out (over twice the first fit's time)")
}

// TestPoolFromTurnsReadsPastADrift: turns beside streams measured while the server ran a fifth
// slower than when the other terms were fitted give the pool term as the server then priced
// it (the truth's 10 ns, a fifth higher: 12 ns) within 5 %, as a line whose intercept takes
// what every turn is mispriced by alike; a slope through 0 reads the drift of the turn's own
// work (100 µs a token here) as the term, and is 30 % off.
func TestPoolFromTurnsReadsPastADrift(t *testing.T) {
	truth := colocatedBase(t)
	truth.Engine, truth.StepTokenBudget, truth.PrefillAttnPoolNs = engine.EngineColocatedMixed, 2048, 10
	truth.PrefillPerToken = 100 * time.Microsecond
	d := besideData(truth, 5)
	for _, m := range d.Of(ExpTurnBeside) {
		for _, run := range m.Runs {
			run[1].Server.Prompt = run[1].Server.Prompt * 6 / 5
		}
	}
	paged := *truth
	paged.PrefillAttnPoolNs = 0
	est := poolFromTurns(d, &paged, 1)
	t.Logf("line: %.3g ± %.2g ns, intercept %s", est.e*1e9, est.se*1e9, seconds(est.alpha))
	within(t, "prefill_attn_pool_ns past a drift", 12, est.e*1e9, 0.05)
	assert.Contains(t, est.src, "the slope of a line whose intercept")
	est.line = false
	est.fit()
	t.Logf("through 0: %.3g ns", est.e*1e9)
	assert.Greater(t, math.Abs(est.e*1e9/12-1), 0.25, "through 0, the drift of the turn's own work is read as the term")
}

// TestSpeedSaysHowFarTheServerMoved checks Fit.Speed from reference requests: each one's TTFT
// and TPOT and the range against the first, held within 15 % or not, and what it cannot say
// when fewer than two completed.
func TestSpeedSaysHowFarTheServerMoved(t *testing.T) {
	ref := func(at, ttft, tpot time.Duration) ReferenceObs {
		start := time.Unix(100, 0).Add(at)
		o := Obs{Start: start, CompletionTokens: ReferenceOutput}
		for i := range ReferenceOutput {
			o.Chunks = append(o.Chunks, start.Add(ttft+time.Duration(i)*tpot))
		}
		return ReferenceObs{At: at, Prompt: ReferencePrompt, Obs: o}
	}
	held := &Fit{}
	held.speed(&Data{References: []ReferenceObs{ref(0, 60*time.Millisecond, 4*time.Millisecond), ref(time.Minute, 63*time.Millisecond, 3900*time.Microsecond)}})
	assert.Equal(t, "reference requests (a fresh 1024-token prompt alone after a flush, 64 tokens out) at 0s, 1m0s: TTFT 60ms, 63ms (+0.0 to +5.0 % against the first), TPOT 4ms, 3.9ms (-2.5 to +0.0 %): the server held its speed within 15 %", held.Speed)

	moved := &Fit{}
	moved.speed(&Data{References: []ReferenceObs{ref(0, 60*time.Millisecond, 4*time.Millisecond), ref(time.Minute, 90*time.Millisecond, 4*time.Millisecond), ref(2*time.Minute, 66*time.Millisecond, 4400*time.Microsecond)}})
	assert.Contains(t, moved.Speed, "TTFT 60ms, 90ms, 66ms (+0.0 to +50.0 % against the first)")
	assert.Contains(t, moved.Speed, "the server's speed or state moved more than 15 % during the calibration, so the fit mixes them")

	failed := ref(time.Minute, 0, 0)
	failed.Obs.Err, failed.Obs.Chunks = "refused", nil
	lone := &Fit{}
	lone.speed(&Data{References: []ReferenceObs{ref(0, 60*time.Millisecond, 4*time.Millisecond), failed}})
	assert.Equal(t, "1 of 2 reference requests completed: how far the server's speed moved over the calibration is not known", lone.Speed)

	none := &Fit{}
	none.speed(&Data{})
	assert.Empty(t, none.Speed, "a fit from recorded runs sends none")
}
