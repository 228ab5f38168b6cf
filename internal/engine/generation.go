package engine

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// PrefixBlock marks a message boundary in a conversation: Hash identifies the conversation up
// to and including the message, Tokens is the prompt length up to there. The prefix cache is
// keyed by these hashes, so a request that repeats an earlier conversation and appends to it
// finds the earlier part cached.
type PrefixBlock struct {
	Hash   uint64
	Tokens int
}

// Job is what a client asked the engine to generate.
type Job struct {
	// PromptTokens is the prompt's length in tokens.
	PromptTokens int
	// Prefix lists the conversation's message boundaries, shortest first.
	Prefix []PrefixBlock
	// MaxTokens caps the output (reasoning included); 0 means only the context length does.
	MaxTokens int
	// IgnoreEOS forces exactly MaxTokens output tokens.
	IgnoreEOS bool
	// Effort is the request's reasoning_effort ("" when absent); efforts other than "" and
	// "none" turn reasoning on.
	Effort string
	// ToolCallTokens > 0 says the reply calls tools: after its reasoning it is exactly that
	// many tokens (the calls' names and arguments, which the HTTP front has written), instead
	// of a length drawn from the profile's efforts. MaxTokens and the context still cap it;
	// IgnoreEOS does not lengthen it.
	ToolCallTokens int
	// Key identifies the request's content; with the seed it makes every random decision about
	// the request deterministic.
	Key uint64
	// Received is the simulated time the request reached the server (zero: unknown); the
	// time until Submit is the simulator's own work, which the model does not count, so it
	// counts towards the engine's lag (see Engine.Lag).
	Received time.Time
	// RequestID is the client's id for the request ("" when it gives none), under which the
	// HTTP front tracks its lag (Engine.Track, RequestLag); the engine does not read it.
	RequestID string
}

// phase is where a generation is in the engine.
type phase int32

const (
	phasePrefillQueue phase = iota
	phaseInflight           // prefilled, KV transfer pending
	phasePinned             // prefilled, KV transfer never completes (prefill-pin)
	phaseDecodeWaiting
	phaseRunning
	phasePaused   // stall-stream
	phaseWedged   // long-context-wedge
	phasePrealloc // waiting for the decode engine to reserve its KV (disaggregated)
	phaseDone
)

// Gen is one generation in progress. Its reader (the HTTP handler) calls Next until it reports
// the end and Cancel when the client goes away; the engine's goroutines do the rest.
type Gen struct {
	// ID numbers generations in arrival order.
	ID uint64
	// Output is the number of tokens the generation will emit, of which the first Reasoning
	// are reasoning tokens.
	Output, Reasoning int
	// Finish is the finish_reason the generation ends with: "stop" or "length".
	Finish string
	// Plan is what the faults decided for this request.
	Plan Plan
	// Prompt is the prompt length in tokens.
	Prompt int
	// Submitted is the simulated time the engine accepted the request.
	Submitted time.Time

	produced  atomic.Int64
	cached    atomic.Int64
	cancelled atomic.Bool // the engine frees it at its next step
	gone      atomic.Bool // its client went away (Cancel)
	aborted   atomic.Pointer[Aborted]
	phase     atomic.Int32
	notify    chan struct{}
	consumed  int // reader-owned
	// late is how far behind its model the generation has fallen at its hand-offs; due is the
	// model's time of its newest token, and oldest of the oldest token its reader has not
	// delivered (UnixNano, 0 when none): nanoseconds, simulated (see lag.go).
	late, due, oldest atomic.Int64
	// lastLag is how late its latest delivery was (see Engine.Delivered); nanoseconds, simulated.
	lastLag atomic.Int64
	// window is the Engine.NewLateness window of its latest delivery, and windowLag how late
	// its latest delivery before that window was (reader-owned, see Engine.Delivered).
	window    int64
	windowLag time.Duration

	// Engine-owned fields: touched only by the goroutine whose queue holds the generation.
	job      Job
	rng      *rand.Rand
	computed int  // context tokens present in KV (cached, prefilled or recomputed)
	target   int  // context tokens to compute before it decodes: the prompt, or after a retraction prompt plus output
	kv       int  // KV tokens while in decode: prompt plus output so far
	holdsKV  bool // decode KV is allocated (running, paused, wedged)
	// prefilled says the step that just ended completed the request's context.
	prefilled bool
	// prefillFrom and prefillEnd are, on a colocated-parallel engine, when the prefill it is in
	// began and ends (zero: none begun); inStep says it emits a token when the decode step in
	// progress ends; prefillScale is its prefill's draw of the step factor and noise.
	prefillFrom, prefillEnd time.Time
	prefillScale            float64
	inStep                  bool
	// queuedAt is when it entered a loop's inbox; set and read under Engine.mu.
	queuedAt time.Time
	// retractedNeed is the KV a retracted request waits for (counted in Engine.retractedKV).
	retractedNeed int
	stalled       bool // the stall-stream pause has happened
}

// Next blocks until the generation has produced tokens the caller has not seen yet, the
// generation has ended, or ctx is done. It returns up to max new tokens and whether the
// generation is complete once those are consumed.
func (g *Gen) Next(ctx context.Context, max int) (n int, done bool, err error) {
	return g.NextChunk(ctx, 1, max)
}

// NextChunk is Next for a chunk of at least atLeast tokens: it blocks until that many new
// tokens (or every token left) are there, then returns up to atMost of them.
func (g *Gen) NextChunk(ctx context.Context, atLeast, atMost int) (n int, done bool, err error) {
	for {
		avail := int(g.produced.Load()) - g.consumed
		if avail > 0 && (avail >= atLeast || g.consumed+avail >= g.Output) {
			n = min(avail, atMost)
			g.consumed += n
			return n, g.consumed >= g.Output, nil
		}
		if g.consumed >= g.Output {
			return 0, true, nil
		}
		if a := g.aborted.Load(); a != nil {
			return 0, false, a
		}
		select {
		case <-g.notify:
		case <-ctx.Done():
			return 0, false, ctx.Err()
		}
	}
}

// inDecode reports whether the generation is in the decode engine.
func (g *Gen) inDecode() bool {
	switch phase(g.phase.Load()) {
	case phaseDecodeWaiting, phaseRunning, phasePaused, phaseWedged:
		return true
	}
	return false
}

// Pending returns how many generated tokens the reader has not taken yet: more than a chunk
// means the reader has fallen behind the engine. Only the reader may call it.
func (g *Gen) Pending() int { return int(g.produced.Load()) - g.consumed }

// Produced returns how many tokens the engine has generated so far.
func (g *Gen) Produced() int { return int(g.produced.Load()) }

// CachedTokens returns how many prompt tokens the prefix cache supplied.
func (g *Gen) CachedTokens() int { return int(g.cached.Load()) }

// emit records one generated token and wakes the reader.
func (g *Gen) emit() int {
	n := int(g.produced.Add(1))
	select {
	case g.notify <- struct{}{}:
	default:
	}
	return n
}

// Ending is how the delivery of a generation ends.
type Ending int

// The endings of a delivery.
const (
	// EndFinish: every output token, then the finish reason.
	EndFinish Ending = iota
	// EndFail: the engine fails the request mid-generation (the errors fault, kind frame).
	EndFail
	// EndCut: the delivery is cut without a finish (the drop fault).
	EndCut
)

// End returns how many tokens the generation delivers and how its delivery ends, as the
// faults planned it.
func (g *Gen) End() (at int, how Ending) {
	at, how = g.Output, EndFinish
	if g.Plan.Failure == FailMidStream && g.Plan.FailAt <= at {
		at, how = g.Plan.FailAt, EndFail
	}
	// ≤, not <: a one-token output is cut after its token, before the finish.
	if g.Plan.DropAt > 0 && g.Plan.DropAt <= at {
		at, how = g.Plan.DropAt, EndCut
	}
	return at, how
}

// Key returns the key of the job the generation was submitted with.
func (g *Gen) Key() uint64 { return g.job.Key }
