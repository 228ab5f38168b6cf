package diagnose

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// The checks below hold what a real server did against what the workload and the harness
// expected and say where they part, in results.json's warnings and the summary (see Checks).
// None changes a figure: the harness's own measurements stay the run's.

// gaugeCheck holds the server's gen_tok_s readings against the harness's own output rate over
// the same sample intervals, so the two are compared like with like: only intervals in which
// tokens reached the harness count (a reading while the run is idle — starting, thinking, a
// stall — says nothing of the rate the harness measures).
type gaugeCheck struct {
	gauge, own []float64 // gen_tok_s and the harness's chunks per simulated second, per interval
	prevS      float64   // the previous sample's time, simulated seconds
	prevChunks int64     // the previous sample's ChunksIn
	lastChunks int64     // the latest sample's ChunksIn
}

func (g *gaugeCheck) sample(s events.Sample) {
	dt, chunks := s.TS-g.prevS, s.ChunksIn-g.prevChunks
	g.prevS, g.prevChunks, g.lastChunks = s.TS, s.ChunksIn, s.ChunksIn
	v, ok := s.Server[events.GenTokS]
	if !ok || dt <= 0 || chunks <= 0 {
		return
	}
	g.gauge = append(g.gauge, v)
	g.own = append(g.own, float64(chunks)/dt)
}

// minGaugeReadings is the fewest gen_tok_s readings worth judging. SGLang refreshes
// gen_throughput every decode_log_interval (40) decode steps, a second or two, and sets it to 0
// when decode idles; the simulator does the same (docs/engine.md §4). Over a handful of readings
// the median of such a gauge is noise: a 6-second smoke run, 8 readings, read a median of
// 40 tok/s against the harness's 166 in a third of its runs. 20 readings are 15 s of tokens
// flowing at the default sample interval.
const minGaugeReadings = 20

// gaugeSlack is how far, as a factor either way, a server's gen_tok_s may read from the
// harness's own rate before it is called a contradiction: SGLang refreshes the gauge every few
// dozen decode steps and averages over them, so it trails a rate that changes by about 2×
// within a run (measured on the simulator's stall-stream run: median 44 against 88 tok/s).
const gaugeSlack = 3

// warning flags the server's gen_tok_s when its typical reading (the median over the
// intervals in which tokens flowed) is more than gaugeSlack times below or above the
// harness's own typical rate over the same intervals (chunks per second × the run's output
// tokens per chunk): a counter the server updates in bursts reads ~0 between spikes, and a
// per-request rate (llama.cpp's) is no aggregate. source names the metric it was read from.
func (g *gaugeCheck) warning(r *results.Results, source string) []string {
	tokens := r.Tokens.Reasoning + r.Tokens.Content
	if len(g.gauge) < minGaugeReadings || tokens <= 0 || g.lastChunks <= 0 {
		return nil
	}
	perChunk := float64(tokens) / float64(g.lastChunks)
	gauge, own := median(g.gauge), median(g.own)*perChunk
	if gauge >= own/gaugeSlack && gauge <= gaugeSlack*own {
		return nil
	}
	lo, hi := slices.Min(g.gauge), slices.Max(g.gauge)
	return []string{fmt.Sprintf("server gauge gen_tok_s (%s) contradicts the harness: median %s tok/s, %s–%s over %d samples while tokens flowed, "+
		"when the harness received a median of %s output tok/s over the same intervals; the run's rate is the harness's (tokens.output_per_second), the gauge is evidence only",
		source, results.Figure(gauge), results.Figure(lo), results.Figure(hi), len(g.gauge), results.Figure(own))}
}

// median is the middle value of xs (the upper one of two); xs is left as it is.
func median(xs []float64) float64 {
	v := slices.Clone(xs)
	slices.Sort(v)
	return v[len(v)/2]
}

// Output lengths that miss the workload's distribution: the mean output of completed requests
// outside [lowSlack × its lower end, highSlack × its upper end].
const (
	lowSlack  = 0.75
	highSlack = 1.25
)

// outputWarning says when the server's outputs missed the workload's output_tokens: a real
// model decides its own length unless request.force_output_length is set, and the contexts of
// later rounds grow by what it wrote. A replay does not sample output_tokens — each request
// forces its recorded length — so a run with scripts skips this check and the replay judges
// each request against its own length instead (internal/replay.Warnings).
func outputWarning(r *results.Results, w *workloads.Workload) []string {
	ok := r.Requests.OK
	if ok == 0 {
		return nil
	}
	d := w.Request.OutputTokens
	mean := float64(r.Tokens.Reasoning+r.Tokens.Content) / float64(ok)
	lo, hi := Lower(d), Upper(d)
	if mean >= lowSlack*float64(lo) && mean <= highSlack*float64(hi) {
		return nil
	}
	why := "the model decides its own length unless request.force_output_length is set, and later rounds' contexts grow by what it writes"
	if w.Request.ForceOutputLength {
		why = "request.force_output_length is set: the server did not honour max_tokens with ignore_eos"
	}
	return []string{fmt.Sprintf("output lengths: completed requests averaged %s output tokens (n=%d, reasoning included) against the workload's request.output_tokens %s (%d–%d tokens): %s",
		results.Figure(mean), ok, d, lo, hi, why)}
}

// reasoningWarning says when the workload asks for reasoning and the server sent none: no
// request streamed a reasoning delta and the server counted no reasoning tokens. llama.cpp,
// for one, accepts any reasoning_effort and passes it to the chat template only; a model that
// does not reason then answers at once, and the run lacks the long reasoning phases (and the
// silences of content they cause) the workload models.
func reasoningWarning(r *results.Results, w *workloads.Workload) []string {
	effort := w.Request.ReasoningEffort
	if effort == "" || effort == "none" || r.Requests.OK == 0 || r.Requests.Reasoned > 0 || r.Tokens.Reasoning > 0 {
		return nil
	}
	return []string{fmt.Sprintf("reasoning: the workload asks for reasoning_effort %s, but none of the %s streamed any reasoning and the server counted no reasoning tokens: the server ignores reasoning_effort or its model does not reason, so the run lacks the reasoning phases the workload models",
		effort, plural.Of(r.Requests.OK, "completed request"))}
}

// contextWords find a context window in a server's refusal: vLLM and servers shaped like it
// say "maximum context length is 1024 tokens"; others name a context size or window.
var contextWords = regexp.MustCompile(`(?i)(?:maximum context length|context (?:size|window|length)|max_model_len|n_ctx)\D{0,24}?(\d{2,9})`)

// contextLengthRefusal reports whether a server's message refuses a request for its length.
var contextLengthRefusal = regexp.MustCompile(`(?i)context (?:length|size|window)|max_model_len|n_ctx|too long|exceeds`)

// promptCounted finds the prompt tokens a server counted in its refusal: llama.cpp says
// "request (1103 tokens) exceeds the available context size", vLLM "(1100 in the messages, …)".
var promptCounted = regexp.MustCompile(`(?i)request \((\d+) tokens\)|\((\d+) in the messages|(\d+) input tokens`)

// refusedPrompt follows a fitted run's requests until the first one refused for its length and
// keeps the prompt the harness estimated for it, to set beside what the server counted. Checks
// feeds it every event in order.
type refusedPrompt struct {
	window int            // the window, in tokens, the workload was fitted to
	est    map[string]int // per open request, its estimated prompt tokens; nil once found
	first  int            // the first refused request's estimated prompt tokens
}

func (p *refusedPrompt) event(e events.Event) {
	if p.est == nil {
		return
	}
	switch e.Kind {
	case events.RequestSent:
		p.est[e.Request] = e.ContextTokens
	case events.Error:
		if e.Status == 400 && contextLengthRefusal.MatchString(e.Message) {
			p.first, p.est = p.est[e.Request], nil
			return
		}
		delete(p.est, e.Request)
	case events.Done, events.Timeout, events.Cancelled:
		delete(p.est, e.Request)
	}
}

// contextRefused says when requests failed with 400 for their length: the server's window is
// below the workload's contexts, and --fit-context scales them to fit. It quotes the window
// the server named, when it named one. When the run was fitted already (fitted not nil), it
// sets the prompt tokens the server counted beside the harness's estimate instead, and offers
// the window that allows for the difference.
func contextRefused(r *results.Results, w *workloads.Workload, fitted *refusedPrompt) []string {
	for _, f := range r.Failures {
		if f.Status != 400 || !contextLengthRefusal.MatchString(f.FirstMessage) {
			continue
		}
		named := 0
		if m := contextWords.FindStringSubmatch(f.FirstMessage); m != nil {
			named, _ = strconv.Atoi(m[1])
		}
		n := NeedOf(w)
		head := fmt.Sprintf("context: %d request%s refused for their length (%s: %q)", f.Count, plural.S(f.Count), f.Key(), f.FirstMessage)
		if fitted != nil {
			return []string{head + refusedAfterFit(fitted, f.FirstMessage, named, n, r.Requests.OK)}
		}
		fit := "--fit-context=TOKENS, the server's context window"
		if named > 0 {
			fit = "--fit-context=" + strconv.Itoa(named)
		}
		return []string{fmt.Sprintf("%s: the server's context window is below the workload's requests (prompts up to ~%d tokens plus max_tokens %d) — rerun with %s to scale the workload's context keys to fit",
			head, n.Prompt, n.MaxTokens, fit)}
	}
	return nil
}

// refusedAfterFit is the rest of contextRefused's sentence for a run fitted to a window: a
// server that names a smaller window than the fit's, or counts more prompt tokens than the
// harness estimated, given as a ratio and the window that allows for it.
func refusedAfterFit(p *refusedPrompt, msg string, named int, n ContextNeed, ok int) string {
	s := fmt.Sprintf(" although the workload was fitted to a window of %d tokens", p.window)
	if named > 0 && named < p.window {
		return s + fmt.Sprintf(": the server names a window of %d tokens — rerun with --fit-context=%d", named, named)
	}
	counted := 0
	if m := promptCounted.FindStringSubmatch(msg); m != nil {
		for _, g := range m[1:] {
			if g != "" {
				counted, _ = strconv.Atoi(g)
			}
		}
	}
	if counted <= p.first || p.first <= 0 {
		return s + fmt.Sprintf(": the server counts more tokens than the harness planned (prompts up to ~%d tokens plus max_tokens %d) — rerun with a smaller --fit-context",
			n.Prompt, n.MaxTokens)
	}
	ratio := float64(counted) / float64(p.first)
	learnt := "none succeeded"
	if ok > 0 {
		learnt = fmt.Sprintf("%d succeeded", ok)
	}
	return s + fmt.Sprintf(": the server counted %d prompt tokens where the harness estimated %d (×%.2f): its tokenizer counts more tokens per word of agentsim's text than the harness assumes, and the harness learns the server's count only from requests that succeed (%s) — rerun with --fit-context=%d (the window ÷ %.2f) to plan for the server's count",
		counted, p.first, ratio, learnt, int(float64(p.window)/ratio), ratio)
}
