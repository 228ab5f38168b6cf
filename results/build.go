package results

import (
	"fmt"
	"maps"
	"slices"

	"github.com/agentsim/agentsim/events"
)

// Builder accumulates a run's events and samples into the counting and statistical parts of
// Results. Feed it every event in order (live, or read back from events.jsonl); it is not safe
// for concurrent use.
type Builder struct {
	// open holds the requests sent without a terminal event, each with the chunks the samples
	// saw it receive.
	open map[string]int
	// okChunks counts the chunks of the requests that ended ok; otherChunks, per request, of
	// those that ended otherwise (failed, timed out, cancelled), in the order they ended.
	okChunks    int64
	otherChunks []float64
	// okTokenFrames counts the frames carrying tokens of the requests that ended ok with a
	// usage, and okFrameTokens those requests' output tokens (see Stream).
	okTokenFrames, okFrameTokens int64
	// chunksIn is the latest sample's count of the chunks every request had received.
	chunksIn int64
	// lastFailed is, per agent, how its latest attempt failed ("" when it did not): a retry
	// attempt sent after it makes that failure a retried one.
	lastFailed map[int]string
	requests   Requests
	rounds     Rounds
	tokens     Tokens
	lat        struct{ ttft, ttftContent, itl, tpot, e2e, pacerWait, output []float64 }
	decode     gauge
	prefill    gauge
	queued     gauge
	samples    int
	failures   failures
	tools      toolsBuilder
}

type gauge struct {
	sum, max float64
	n        int
}

func (g *gauge) add(v float64) {
	g.sum += v
	g.max = max(g.max, v)
	g.n++
}

func (g *gauge) meanMax() MeanMax {
	if g.n == 0 {
		return MeanMax{}
	}
	return MeanMax{Mean: g.sum / float64(g.n), Max: g.max, N: g.n}
}

// NewBuilder returns an empty Builder. It leaves Requests.Stalled to the run's diagnosis
// (internal/diagnose), which alone knows, from the samples and the harness's lag, how long a
// request went without a byte.
func NewBuilder() *Builder {
	return &Builder{open: map[string]int{}, lastFailed: map[int]string{}}
}

// Event adds one event.
func (b *Builder) Event(e events.Event) {
	b.tools.event(e)
	switch e.Kind {
	case events.RequestSent:
		b.requests.Sent++
		b.open[e.Request] = 0
		b.retried(e)
	case events.Done:
		b.terminal(e)
		b.requests.OK++
		if e.Attempt > 0 {
			b.requests.RetriedOK++
		}
		b.done(e)
	case events.Error:
		b.terminal(e)
		b.requests.Errors++
		b.requests.Failed++
		b.lastFailed[e.Agent] = FailureKey(e)
		b.failures.add(e)
	case events.Timeout:
		b.terminal(e)
		b.requests.Timeouts++
		b.requests.Failed++
		b.lastFailed[e.Agent] = FailureKey(e)
		b.failures.add(e)
	case events.Cancelled:
		b.terminal(e)
		b.requests.Cancelled++
	case events.FirstReasoning:
		b.requests.Reasoned++
	case events.Retry:
		b.requests.Retries++
		if _, ok := b.lastFailed[e.Agent]; !ok && e.Class != "" {
			// A harness's own retry of an attempt it ended itself (agentsim exec): the retry
			// names how the attempt ended, which no failure counted.
			b.lastFailed[e.Agent] = string(e.Class)
			b.requests.Failed++
		}
	case events.PacerAcquired:
		b.lat.pacerWait = append(b.lat.pacerWait, e.PacerWaitS)
	case events.RoundDone:
		switch e.Outcome {
		case events.RoundOK:
			b.rounds.Completed++
		case events.RoundCancelled: // never sent its request: counted as not started
		default:
			b.failedRound(e.Round)
		}
	}
}

// failedRound counts a failed round and widens the range of failed rounds.
func (b *Builder) failedRound(round int) {
	b.rounds.Failed++
	if b.rounds.FirstFailed == 0 || round < b.rounds.FirstFailed {
		b.rounds.FirstFailed = round
	}
	b.rounds.LastFailed = max(b.rounds.LastFailed, round)
}

// retried turns the agent's failed attempt into a retried one when e sends its retry: the
// request is not failed (yet), its failure is a retry reason.
func (b *Builder) retried(e events.Event) {
	key, ok := b.lastFailed[e.Agent]
	delete(b.lastFailed, e.Agent)
	if !ok || e.Attempt == 0 {
		return
	}
	b.requests.Failed--
	if b.requests.RetryReasons == nil {
		b.requests.RetryReasons = map[string]int{}
	}
	b.requests.RetryReasons[key]++
}

// FailureKey names a failed attempt's class and status, as "http_status 429" or
// "timeout_idle": the keys of retry reasons and of the failure breakdowns in verdicts.
func FailureKey(e events.Event) string {
	class := failureClass(e)
	if e.Status >= 300 { // a failure after 200 headers (timeout, error frame) says nothing by its status
		return fmt.Sprintf("%s %d", class, e.Status)
	}
	return string(class)
}

func (b *Builder) terminal(e events.Event) {
	delete(b.open, e.Request)
	if e.Kind == events.Done {
		b.okChunks += int64(e.Chunks)
		if e.TokenChunks > 0 && e.CompletionTokens > 0 {
			b.okTokenFrames += int64(e.TokenChunks)
			b.okFrameTokens += int64(e.CompletionTokens)
		}
	} else if e.Chunks > 0 {
		b.otherChunks = append(b.otherChunks, float64(e.Chunks))
	}
	delete(b.lastFailed, e.Agent)
}

// done records a successful request's latencies and tokens.
func (b *Builder) done(e events.Event) {
	b.lat.e2e = append(b.lat.e2e, e.LatencyS)
	b.lat.output = append(b.lat.output, float64(e.CompletionTokens))
	if e.TTFTS > 0 {
		b.lat.ttft = append(b.lat.ttft, e.TTFTS)
	}
	if e.TTFTContentS > 0 {
		b.lat.ttftContent = append(b.lat.ttftContent, e.TTFTContentS)
	}
	if e.ITLS > 0 {
		b.lat.itl = append(b.lat.itl, e.ITLS)
	}
	if e.CompletionTokens > 1 && e.TTFTS > 0 {
		b.lat.tpot = append(b.lat.tpot, (e.LatencyS-e.TTFTS)/float64(e.CompletionTokens-1))
	}
	b.tokens.Prompt += int64(e.PromptTokens)
	b.tokens.Cached += int64(e.CachedTokens)
	b.tokens.Reasoning += int64(e.ReasoningTokens)
	b.tokens.Content += int64(e.CompletionTokens - e.ReasoningTokens)
}

// Sample adds one sample.
func (b *Builder) Sample(s events.Sample) {
	b.samples++
	b.chunksIn = max(b.chunksIn, s.ChunksIn)
	for _, st := range s.Streams {
		if c, ok := b.open[st.Request]; ok {
			b.open[st.Request] = max(c, st.Chunks)
		}
	}
	if v, ok := s.Server[events.DecodeRunning]; ok {
		b.decode.add(v)
	}
	if v, ok := s.Server[events.PrefillInflight]; ok {
		b.prefill.add(v)
	}
	if v, ok := s.Server[events.Queued]; ok {
		b.queued.add(v)
	}
}

// Fill writes the accumulated counts and statistics into r; simSeconds is the run's simulated
// duration, used for the output and frame rates, and r.WallSeconds, when set, its wall
// duration, used for the frame rate per wall second. It leaves r.Stream.Server to the run,
// which alone scraped the server.
func (b *Builder) Fill(r *Results, simSeconds float64) {
	r.Requests = b.requests
	r.Requests.RetryReasons = maps.Clone(b.requests.RetryReasons)
	r.Requests.InFlight = len(b.open)
	r.Rounds.Completed, r.Rounds.Failed = b.rounds.Completed, b.rounds.Failed
	r.Rounds.FirstFailed, r.Rounds.LastFailed = b.rounds.FirstFailed, b.rounds.LastFailed
	r.Tokens = b.tokens
	if simSeconds > 0 {
		r.Tokens.OutputPerSecond = sum(b.streamed()) / simSeconds
	}
	r.Latency = Latency{
		TTFT: Summarize(clone(b.lat.ttft)), TTFTContent: Summarize(clone(b.lat.ttftContent)),
		ITL: Summarize(clone(b.lat.itl)), TPOT: Summarize(clone(b.lat.tpot)),
		E2E: Summarize(clone(b.lat.e2e)), PacerWait: Summarize(clone(b.lat.pacerWait)),
	}
	r.Failures = b.failures.sorted()
	r.Server.Gauges = Gauges{DecodeRunning: b.decode.meanMax(), PrefillInflight: b.prefill.meanMax(), Queued: b.queued.meanMax(),
		Samples: b.samples}
	r.Stream = b.stream(simSeconds, r.WallSeconds)
	r.Tools = b.tools.fill()
}

func clone(xs []float64) []float64 { return append([]float64(nil), xs...) }

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// frames returns the data frames every request received: those of the ended requests plus
// those of the open ones as the latest sample naming each counted them, or the latest
// sample's chunks_in when that is more (a sample names only some open streams).
func (b *Builder) frames() int64 {
	n := b.okChunks + int64(sum(b.otherChunks))
	for _, c := range b.open {
		n += int64(c)
	}
	return max(n, b.chunksIn)
}

// streamed returns, per request, the output tokens it streamed: the usage of each request that
// finished ok, then, at the tokens per chunk those showed (1 without any), the chunks of each
// that ended otherwise and of each still open (as the latest sample naming it counted them,
// by request id). A run cut short, whose requests were cancelled mid-stream, is so not
// credited with a rate near zero.
func (b *Builder) streamed() []float64 {
	out := clone(b.lat.output)
	perChunk := 1.0
	if ok := sum(out); b.okChunks > 0 && ok > 0 {
		perChunk = ok / float64(b.okChunks)
	}
	for _, c := range b.otherChunks {
		out = append(out, c*perChunk)
	}
	for _, id := range slices.Sorted(maps.Keys(b.open)) {
		if c := b.open[id]; c > 0 {
			out = append(out, float64(c)*perChunk)
		}
	}
	return out
}
