package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentsim/agentsim/clock"
)

// Engine is the simulated prefill/decode engine pair. Create it with NewEngine, run it with
// Start, and stop it with Stop; Submit may be called from any goroutine.
type Engine struct {
	clk     *clock.Clock
	prof    *Profile
	faults  *Faults
	knobs   Knobs
	running int // decode batch limit
	// jitter draws the step-time noise; only the decode goroutine uses it.
	jitter *rand.Rand

	mu      sync.Mutex
	nextID  uint64
	seen    map[uint64]uint32 // occurrences per content key, for deterministic decisions
	prefill inbox
	decode  inbox
	delays  delayQueue
	// prealloc is the queue of requests waiting for the decode engine to reserve their KV
	// (disaggregated), first come first served; preallocWaiting is its length.
	prealloc        []*Gen
	preallocWaiting atomic.Int64
	// retractedKV is the KV the retracted requests need to run again; reservations leave it
	// free, as SGLang's decode prealloc counts retracted requests, so new requests cannot
	// starve them.
	retractedKV atomic.Int64
	// crashed is set when the scheduler dies (retract-crash): it steps no more and every later
	// request is refused.
	crashed atomic.Bool

	stats liveStats
	// lag records how late tokens are delivered; prefillBehind and decodeBehind say how far
	// behind its model each loop's generations are (see lag.go).
	lag                         clock.Lag
	prefillBehind, decodeBehind loopBehind
	// gained records, per delivery, the lateness its generation gained in the current window
	// of NewLateness (see lag.go); window counts those windows.
	gained       clock.Lag
	window       atomic.Int64
	gainedMu     sync.Mutex
	gainedWindow *clock.LagWindow
	// overhead is simulated time each loop burns after a step, standing for the simulator's
	// own work; only tests set it (see stepOverhead).
	overhead time.Duration
	// reqLags tracks each open request's own lag under the client's id (see reqlag.go).
	reqLags  requestLags
	loggedMu sync.Mutex
	logged   LoggedStats

	life    sync.Mutex // orders Start and Stop
	stop    context.CancelFunc
	started bool // guarded by life
	done    sync.WaitGroup
	stopped atomic.Bool
}

// inbox hands generations to an engine goroutine and wakes it.
type inbox struct {
	items []*Gen
	wake  chan struct{}
}

func (b *inbox) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// NewEngine builds an engine for the profile with the given faults (nil: healthy).
func NewEngine(clk *clock.Clock, prof *Profile, faults *Faults) (*Engine, error) {
	if err := prof.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{
		clk: clk, prof: prof, faults: faults, knobs: faults.Knobs(),
		seen:    map[uint64]uint32{},
		prefill: inbox{wake: make(chan struct{}, 1)},
		decode:  inbox{wake: make(chan struct{}, 1)},
		delays:  delayQueue{wake: make(chan struct{}, 1)},
	}
	var seed uint64
	if faults != nil {
		seed = faults.seed
	}
	e.jitter = rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908))
	e.running = prof.MaxRunning
	if e.knobs.MaxRunningCap > 0 {
		e.running = min(e.running, e.knobs.MaxRunningCap)
	}
	return e, nil
}

// Profile returns the engine's profile.
func (e *Engine) Profile() *Profile { return e.prof }

// Faults returns the engine's faults.
func (e *Engine) Faults() *Faults { return e.faults }

// Start runs the engine's goroutines until Stop: the batch loop and the timed events, and for
// a disaggregated profile the prefill engine. Starting twice, or after Stop, does nothing: goroutines started after Stop
// would have no one to end them.
func (e *Engine) Start() {
	e.life.Lock()
	defer e.life.Unlock()
	if e.started || e.stopped.Load() {
		return
	}
	e.started = true
	ctx, cancel := context.WithCancel(context.Background())
	e.stop = cancel
	if e.prof.engine() == EngineDisaggregated {
		e.done.Add(1)
		go func() { defer e.done.Done(); e.prefillLoop(ctx) }()
	}
	e.done.Add(2)
	go func() { defer e.done.Done(); e.delayLoop(ctx) }()
	go func() { defer e.done.Done(); e.newBatchLoop().run(ctx) }()
}

// Stop ends the engine's goroutines and waits for them. Generations still in progress never
// complete; their readers see their own contexts end. Stop is safe to call twice.
func (e *Engine) Stop() {
	e.life.Lock()
	e.stopped.Store(true)
	if e.stop != nil {
		e.stop()
	}
	e.life.Unlock()
	e.done.Wait()
}

// ErrStopped is returned by Submit after Stop.
var ErrStopped = errors.New("engine stopped")

// Submit admits a request, deciding its output length and faults. It returns a *Rejection
// for requests refused before their generation starts (context too long, an injected
// rejection, queue full), and ErrStopped after Stop.
func (e *Engine) Submit(j Job) (*Gen, error) {
	if j.PromptTokens >= e.prof.MaxContextTokens {
		return nil, &Rejection{Reason: TooLong, PromptTokens: j.PromptTokens, MaxContextTokens: e.prof.MaxContextTokens}
	}
	if e.stopped.Load() {
		return nil, ErrStopped
	}
	if e.crashed.Load() {
		return nil, &Rejection{Reason: Unavailable}
	}
	e.mu.Lock()
	e.nextID++
	id := e.nextID
	if len(e.seen) >= maxSeenKeys {
		// Bound memory on endless runs of unique prompts; only exact repeats of a prompt
		// need their occurrence count, and those are recent.
		clear(e.seen)
	}
	occurrence := e.seen[j.Key]
	e.seen[j.Key] = occurrence + 1
	e.mu.Unlock()

	rng := e.faults.rngFor(j.Key ^ uint64(occurrence)*0xbf58476d1ce4e5b9)
	g := &Gen{ID: id, Prompt: j.PromptTokens, Submitted: e.clk.Now(), job: j, rng: rng, notify: make(chan struct{}, 1),
		target: j.PromptTokens}
	if !j.Received.IsZero() {
		g.fallBehind(g.Submitted.Sub(j.Received)) // the server's reading and counting of the request
	}
	e.decideLength(g)
	g.Plan = e.faults.plan(rng)
	g.Plan.place(g.Output)
	if err := e.refuse(g); err != nil {
		return nil, err
	}
	// The queue-limit check and the enqueue happen under one lock, so concurrent requests
	// cannot overshoot the limit.
	e.mu.Lock()
	if e.knobs.QueueLimited && e.queued() >= int64(e.knobs.MaxQueued) {
		e.mu.Unlock()
		return nil, &Rejection{Reason: QueueFull, MaxQueued: e.knobs.MaxQueued}
	}
	e.stats.promptTokens.Add(int64(j.PromptTokens))
	if d := e.prof.Admission(j.PromptTokens); d > 0 {
		e.mu.Unlock()
		e.delays.push(g.Submitted.Add(d), g, delayAdmit)
		return g, nil
	}
	e.admitLocked(g)
	e.mu.Unlock()
	return g, nil
}

// admitLocked hands a submitted generation to its scheduler: the prefill queue of a colocated
// engine, or a disaggregated one's wait for its decode KV reservation. It is called with e.mu
// held.
func (e *Engine) admitLocked(g *Gen) {
	now := e.clk.Now()
	if e.prof.engine() != EngineDisaggregated {
		e.stats.prefillQueued.Add(1)
		g.queuedAt = now
		e.prefill.items = append(e.prefill.items, g)
		e.prefill.signal()
		return
	}
	// Disaggregated: the decode engine reserves the request's KV before prefill runs.
	g.phase.Store(int32(phasePrealloc))
	e.prealloc = append(e.prealloc, g)
	e.preallocWaiting.Add(1)
	e.reserveLocked()
	if phase(g.phase.Load()) == phasePrealloc && e.prof.BootstrapTimeout > 0 {
		e.delays.push(g.Submitted.Add(e.prof.BootstrapTimeout), g, delayBootstrapTimeout)
	}
}

// drainPrealloc reserves decode KV for the requests waiting for it, in order.
func (e *Engine) drainPrealloc() {
	if e.preallocWaiting.Load() == 0 {
		return
	}
	e.mu.Lock()
	e.reserveLocked()
	e.mu.Unlock()
}

// reserveLocked reserves decode KV for the prealloc queue's requests, first come first
// served, while their prompts fit, and sends them to prefill. Aborted ones leave. e.mu is held.
func (e *Engine) reserveLocked() {
	kept := e.prealloc[:0]
	blocked, sent := false, false
	for _, g := range e.prealloc {
		switch {
		case g.cancelled.Load():
			e.finish(g)
			continue
		case blocked || e.stats.kvUsed.Load()+e.retractedKV.Load()+int64(g.Prompt) > int64(e.prof.KVCapacityTokens):
			blocked = true
			kept = append(kept, g)
			continue
		}
		g.kv, g.holdsKV = g.Prompt, true
		e.stats.kvUsed.Add(int64(g.Prompt))
		g.phase.Store(int32(phasePrefillQueue))
		e.stats.prefillQueued.Add(1)
		g.queuedAt = e.clk.Now()
		e.prefill.items = append(e.prefill.items, g)
		if e.prof.WaitingTimeout > 0 && !g.Plan.Pinned {
			e.delays.push(e.clk.Now().Add(e.prof.WaitingTimeout), g, delayWaitingTimeout)
		}
		sent = true
	}
	clear(e.prealloc[len(kept):])
	e.prealloc = kept
	e.preallocWaiting.Store(int64(len(kept)))
	if sent {
		e.prefill.signal()
	}
}

// maxSeenKeys bounds the per-content occurrence counts kept for deterministic decisions.
const maxSeenKeys = 1 << 20

// refuse returns the rejection an injected fault imposes, if any.
func (e *Engine) refuse(g *Gen) error {
	switch g.Plan.Failure {
	case FailRateLimited:
		return &Rejection{Reason: RateLimited, RetryAfter: g.Plan.RetryAfter}
	case FailOverloaded:
		return &Rejection{Reason: Overloaded}
	}
	return nil
}

// decideLength sets the generation's output and reasoning lengths and finish reason.
func (e *Engine) decideLength(g *Gen) {
	j := g.job
	limit := e.prof.MaxContextTokens - j.PromptTokens
	if j.MaxTokens > 0 {
		limit = min(limit, j.MaxTokens)
	}
	lp, ok := e.prof.Efforts[j.Effort]
	if !ok && reasoningOn(j.Effort) {
		lp = e.prof.Efforts["high"] // an effort this profile does not know still reasons
	} else if !ok {
		lp = e.prof.Efforts[""]
	}
	want := lp.Min + g.rng.IntN(lp.Max-lp.Min+1)
	reasoning := 0
	switch {
	case j.ToolCallTokens > 0:
		// A reply that calls tools reasons as a reply of its effort would, then ends with
		// its calls.
		if reasoningOn(j.Effort) {
			reasoning = int(float64(want) * lp.ReasoningFraction)
		}
		want = reasoning + j.ToolCallTokens
	case j.IgnoreEOS && j.MaxTokens > 0:
		want = limit
		fallthrough
	default:
		if reasoningOn(j.Effort) {
			reasoning = int(float64(want) * lp.ReasoningFraction)
		}
	}
	g.Output, g.Finish = min(want, limit), "stop"
	if want > limit || (want == limit && j.ToolCallTokens == 0) {
		g.Finish = "length"
	}
	g.Reasoning = min(reasoning, g.Output)
}

func reasoningOn(effort string) bool { return effort != "" && effort != "none" }

// Cancel says the generation's client has gone: the engine frees its slot and KV at its next
// step once the profile's AbortDelay has passed — unless, with DecodeIgnoresDisconnect, the
// request is in the decode engine by then, where it runs on to its end.
func (e *Engine) Cancel(g *Gen) {
	if g.phase.Load() == int32(phaseDone) || g.gone.Swap(true) {
		return
	}
	if d := e.prof.AbortDelay; d > 0 {
		e.delays.push(e.clk.Now().Add(d), g, delayAbort)
		return
	}
	e.abandon(g)
}

// Drop ends the generation by the server's own decision (an injected failure, a cut
// delivery): the engine frees its slot and KV at its next step, without the abort delay.
func (e *Engine) Drop(g *Gen) {
	g.gone.Store(true)
	e.kill(g)
}

// abandon frees a generation whose client has gone, as Cancel says.
func (e *Engine) abandon(g *Gen) {
	if e.prof.DecodeIgnoresDisconnect && g.inDecode() {
		return
	}
	e.kill(g)
}

// kill makes the engine drop the generation at its next step.
func (e *Engine) kill(g *Gen) {
	if g.phase.Load() == int32(phaseDone) || g.cancelled.Swap(true) {
		return
	}
	select {
	case g.notify <- struct{}{}:
	default:
	}
	e.prefill.signal()
	e.decode.signal()
	e.delays.signal()
}

// timeout aborts a disaggregated request still at the stage whose timeout has come.
func (e *Engine) timeout(g *Gen, stage Stage, since time.Time) {
	switch p := phase(g.phase.Load()); {
	case stage == StageBootstrapping && p == phasePrealloc:
	case stage == StageWaitingForInput && (p == phasePrefillQueue || p == phaseInflight):
	default:
		return
	}
	e.stats.timedOut.Add(1)
	if stage == StageBootstrapping {
		e.stats.timedOutBootstrap.Add(1)
	}
	g.aborted.Store(&Aborted{Stage: stage, Elapsed: e.clk.Now().Sub(since), Room: g.ID})
	e.kill(g)
}

// crash kills the scheduler (retract-crash): it steps no more, its requests' streams stop,
// and every later request is refused.
func (e *Engine) crash() { e.crashed.Store(true) }

// enqueueDecode hands a generation to the decode engine.
func (e *Engine) enqueueDecode(g *Gen) {
	g.phase.Store(int32(phaseDecodeWaiting))
	e.stats.decodeWaiting.Add(1)
	e.mu.Lock()
	g.queuedAt = e.clk.Now()
	e.decode.items = append(e.decode.items, g)
	e.mu.Unlock()
	e.decode.signal()
}

// take empties an inbox.
func (e *Engine) take(b *inbox) []*Gen {
	e.mu.Lock()
	items := b.items
	b.items = nil
	e.mu.Unlock()
	return items
}

// finish marks a generation done or aborted and counts it.
func (e *Engine) finish(g *Gen) {
	g.phase.Store(int32(phaseDone))
	if g.cancelled.Load() {
		e.stats.aborted.Add(1)
	} else {
		e.stats.finished.Add(1)
	}
}

// wait blocks until the inbox is signalled; false means the engine is stopping.
func wait(ctx context.Context, b *inbox) bool {
	select {
	case <-b.wake:
		return true
	case <-ctx.Done():
		return false
	}
}
