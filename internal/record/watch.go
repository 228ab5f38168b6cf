package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/redact"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/internal/scrape"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/trace"
	"github.com/agentsim/agentsim/workloads"
)

// ErrDirHoldsRun marks a watch refused because the directory of its trace holds a run already,
// whose files the watch's would replace.
var ErrDirHoldsRun = errors.New("the trace's directory holds a run")

// WatchOptions configures a Watcher.
type WatchOptions struct {
	// Dir receives events.jsonl, samples.jsonl, config.yaml and record.json, the files
	// `agentsim diagnose` reads; it is the trace's directory.
	Dir string
	// Upstream (credentials removed) and TraceFile are recorded in record.json.
	Upstream, TraceFile string
	// MetricsURL is the server's /metrics, scraped every sample; "" reads no gauges.
	MetricsURL string
	// APIKey is sent as a bearer token with the scrapes of MetricsURL when it is on
	// Upstream's scheme, host and port (a server started with a key refuses its /metrics
	// without it), and never to another host; "" sends none.
	APIKey string
	// Client scrapes MetricsURL; nil means a client with a 5 s timeout.
	Client *http.Client
	// Clock paces the samples; it must be the proxy's.
	Clock *clock.Clock
	// Watchdog holds the thresholds (stall_after, hang_after, slow_after); zero values take
	// the defaults. SampleInterval is the time between samples; 0 means 750 ms.
	Watchdog       workloads.Watchdog
	SampleInterval time.Duration
	// Out receives a line whenever the verdict changes kind and when a stall episode begins.
	Out io.Writer
	// Workload, when set, is written as config.yaml and gives the thresholds in place of
	// Watchdog and SampleInterval (agentsim exec's workload); nil writes a workload "record".
	Workload *workloads.Workload
	// AgentOf, when set, names the agent of a session, for a proxy whose harness tags each
	// process's requests (agentsim exec): see exec.go.
	AgentOf func(session string) (agent int, ok bool)
}

// recordInfo is record.json (rundir.Record): its presence tells diagnosis that the events
// come from a proxy.
type recordInfo struct {
	Schema     string `json:"schema"`
	Upstream   string `json:"upstream"`
	Trace      string `json:"trace"`
	MetricsURL string `json:"metrics_url,omitempty"`
	Started    string `json:"started"`
}

// Watcher turns what the proxy sees into events.jsonl and samples.jsonl — each session an
// agent, each request a round — and feeds them to the same diagnose.Analyzer as a run's
// watchdog, configured for a proxy: there is no pacer view, so the verdicts say what a proxy
// cannot see. It is the proxy's Observer; Run samples until its context ends.
type Watcher struct {
	o       WatchOptions
	scraper *scrape.Scraper
	stallS  float64 // the watchdog's stall_after, in seconds: a sample's silent threshold

	mu        sync.Mutex
	a         *diagnose.Analyzer
	evs       *events.Writer[events.Event]
	samples   *events.Writer[events.Sample]
	agents    map[string]int // session → agent id, in order of appearance
	tokensOut int64
	chunksIn  int64  // chunks of ended requests
	lastShape string // the last verdict printed: its kind and summary without numbers
	procs     *procView

	// What the proxy told, not yet recorded, in the order told: the proxy's goroutines only
	// queue it (tell), so that a forwarding goroutine neither encodes events nor waits for the
	// analyzer, and whoever takes mu next records it first (lock). told wakes Run to record it.
	qmu   sync.Mutex
	queue []told
	told  chan struct{}
}

// told is one call of the Observer, kept until it is recorded: kind is RequestSent, Headers,
// FirstContent, FirstReasoning or Done (the request ended: req, class and chunks); wall is
// when it was told.
type told struct {
	kind   events.Kind
	r      Seen
	t      float64
	wall   time.Time
	req    trace.Request
	class  events.Class
	chunks int
}

var _ Observer = (*Watcher)(nil)

// NewWatcher creates the watch files in o.Dir; it refuses a directory that already holds a
// recording's events.
func NewWatcher(o WatchOptions) (*Watcher, error) {
	if o.SampleInterval <= 0 {
		o.SampleInterval = workloads.DefaultSampleInterval
	}
	if o.Clock == nil {
		o.Clock = clock.Real()
	}
	evPath := filepath.Join(o.Dir, rundir.Events)
	if _, err := os.Stat(evPath); err == nil {
		return nil, fmt.Errorf("%w: %s exists, and the watch writes a run's files beside the trace", ErrDirHoldsRun, evPath)
	}
	w := workloads.Defaults()
	w.Name = "record"
	if o.Workload != nil {
		w = *o.Workload
		o.Watchdog, o.SampleInterval = w.Watchdog, w.SampleInterval
	}
	if o.Watchdog.StallAfter > 0 {
		w.Watchdog.StallAfter = o.Watchdog.StallAfter
	}
	if o.Watchdog.HangAfter > 0 {
		w.Watchdog.HangAfter = o.Watchdog.HangAfter
	}
	if o.Watchdog.SlowAfter > 0 {
		w.Watchdog.SlowAfter = o.Watchdog.SlowAfter
	}
	w.SampleInterval = o.SampleInterval
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if err := writeWatchFiles(o, &w); err != nil {
		return nil, err
	}
	cfg := diagnose.ConfigFrom(&w)
	cfg.Proxy, cfg.Agents, cfg.Rounds = true, 0, 0
	wt := &Watcher{o: o, a: diagnose.New(cfg), agents: map[string]int{}, stallS: w.Watchdog.StallAfter.Seconds(),
		told: make(chan struct{}, 1)}
	if o.AgentOf != nil {
		wt.procs = newProcView(o.AgentOf)
	}
	var err error
	if wt.evs, err = events.Create[events.Event](evPath); err != nil {
		return nil, err
	}
	if wt.samples, err = events.Create[events.Sample](filepath.Join(o.Dir, rundir.Samples)); err != nil {
		wt.evs.Close()
		return nil, err
	}
	if o.MetricsURL != "" {
		wt.scraper = scrape.New([]string{o.MetricsURL}, o.Client, o.Clock).Authorize(o.APIKey, o.Upstream)
	}
	return wt, nil
}

// writeWatchFiles writes config.yaml (the thresholds diagnosis uses) and record.json.
func writeWatchFiles(o WatchOptions, w *workloads.Workload) error {
	y, err := w.YAML()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.Dir, rundir.Config), y, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", rundir.Config, err)
	}
	info, _ := json.MarshalIndent(recordInfo{Schema: "agentsim.record/v1", Upstream: redact.URL(o.Upstream),
		Trace: o.TraceFile, MetricsURL: redact.URL(o.MetricsURL), Started: o.Clock.WallNow().UTC().Format(time.RFC3339)}, "", "  ")
	if err := os.WriteFile(filepath.Join(o.Dir, rundir.Record), append(info, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", rundir.Record, err)
	}
	return nil
}

// agent returns the agent id of session; callers hold mu.
func (w *Watcher) agent(session string) int {
	id, ok := w.agents[session]
	if !ok {
		id = len(w.agents)
		w.agents[session] = id
	}
	return id
}

// record stamps e with the wall time now, writes it and feeds it to the analyzer; callers
// hold mu.
func (w *Watcher) record(e events.Event) { w.recordAt(e, w.o.Clock.WallNow()) }

// recordAt is record with the wall time at which e happened.
func (w *Watcher) recordAt(e events.Event, wall time.Time) {
	e.Wall = wall.UTC().Format(time.RFC3339Nano)
	w.evs.Write(e)
	w.a.Event(e)
}

// tell queues what the proxy told and wakes Run to record it.
func (w *Watcher) tell(t told) {
	t.wall = w.o.Clock.WallNow()
	w.qmu.Lock()
	w.queue = append(w.queue, t)
	w.qmu.Unlock()
	select {
	case w.told <- struct{}{}:
	default: // Run is already woken
	}
}

// lock takes mu and records what the proxy told before it, in order; callers unlock mu.
func (w *Watcher) lock() {
	w.mu.Lock()
	w.qmu.Lock()
	q := w.queue
	w.queue = nil
	w.qmu.Unlock()
	for i := range q {
		w.apply(&q[i])
	}
}

// event builds the event of kind k for request r at t; callers hold mu.
func (w *Watcher) event(k events.Kind, r Seen, t float64) events.Event {
	if w.procs != nil {
		return w.procs.event(k, r, t)
	}
	id := w.agent(r.Session)
	return events.Event{TS: t, Kind: k, Agent: id, Round: r.Seq + 1, Request: requestID(roundID{agent: id, round: r.Seq + 1})}
}

// Sent implements Observer.
func (w *Watcher) Sent(r Seen) { w.tell(told{kind: events.RequestSent, r: r, t: r.SentS}) }

// Headers implements Observer.
func (w *Watcher) Headers(r Seen, t float64, _ int) { w.tell(told{kind: events.Headers, r: r, t: t}) }

// FirstToken implements Observer.
func (w *Watcher) FirstToken(r Seen, t float64, reasoning bool) {
	k := events.FirstContent
	if reasoning {
		k = events.FirstReasoning
	}
	w.tell(told{kind: k, r: r, t: t})
}

// Ended implements Observer: the terminal event, then the round's end.
func (w *Watcher) Ended(r Seen, t float64, req trace.Request, class events.Class, chunks int) {
	w.tell(told{kind: events.Done, r: r, t: t, req: req, class: class, chunks: chunks})
}

// apply records one call of the Observer; callers hold mu.
func (w *Watcher) apply(c *told) {
	r, t := c.r, c.t
	switch c.kind {
	case events.RequestSent:
		if w.procs != nil {
			for _, e := range w.procs.sent(r) {
				w.recordAt(e, c.wall)
			}
		}
		e := w.event(events.RequestSent, r, r.SentS)
		e.ContextTokens, e.MaxTokens, e.UserAgent = r.PromptTokens, r.MaxTokens, r.UserAgent
		w.recordAt(e, c.wall)
	case events.Done:
		w.ended(c)
	default:
		w.recordAt(w.event(c.kind, r, t), c.wall)
	}
}

// ended records a request's terminal event, then the round's end; callers hold mu.
func (w *Watcher) ended(c *told) {
	r, t, req, class, chunks := c.r, c.t, &c.req, c.class, c.chunks
	e := w.event(events.Done, r, t)
	e.LatencyS, e.TTFTS, e.Chunks, e.Status, e.FinishReason = req.E2ES, req.TTFTS, chunks, req.Status, events.FinishReason(req.FinishReason)
	e.PromptTokens, e.CompletionTokens, e.ReasoningTokens, e.CachedTokens = req.PromptTokens, req.OutputTokens, req.ReasoningTokens, req.CachedTokens
	e.ContentTokens = req.OutputTokens - req.ReasoningTokens
	e.SinceLastByteS = max(0, t-r.LastByteS)
	done := events.Event{TS: t, Kind: events.RoundDone, Agent: e.Agent, Round: e.Round, Outcome: events.RoundOK}
	e.Kind = class.Outcome().Kind()
	if e.Kind == events.Done {
		w.tokensOut += int64(req.OutputTokens)
	} else {
		e.Class, e.Message = class, req.Error
		done.Outcome, done.Class = events.RoundFailed, class
	}
	w.chunksIn += int64(chunks)
	w.recordAt(e, c.wall)
	if w.procs == nil {
		w.recordAt(done, c.wall)
		return
	}
	for _, d := range w.procs.ended(r, e, done) {
		w.recordAt(d, c.wall)
	}
}

// minSampleWall is the least wall time between two samples, and sampleShare bounds the share
// of the wall time that sampling takes: the next sample waits at least sampleShare times the
// last one's own work (the snapshot, the sample and the verdict, without the scrape), so the
// samples take at most 1/sampleShare (2 %) of it. The sample interval is the server's time, so
// an agentsim server at --speedup 1000 asks a sample every 0.75 ms of wall time, each over
// every open stream: at 5,000 streams that cost the proxy more CPU than the frames it
// forwards. A tick sooner than either bound after the last sample is skipped; each sample
// says when it was taken, so diagnosis reads the gaps as they are.
const (
	minSampleWall = 10 * time.Millisecond
	sampleShare   = 50
)

// Run samples the proxy every sample interval (no sooner than minSampleWall, nor than
// sampleShare times the last sample's own work, after it) until ctx ends: samples.jsonl, the
// analyzer, and a line on Out when the verdict changes kind or a stall episode begins. It
// records what the proxy tells as it is told, and flushes the files every second.
func (w *Watcher) Run(ctx context.Context, p *Proxy) {
	t := w.o.Clock.NewTicker(w.o.SampleInterval)
	defer t.Stop()
	flush := w.o.Clock.NewTicker(time.Second)
	defer flush.Stop()
	var last time.Time      // wall time of the last sample
	gap := time.Duration(0) // the least wall time from it to the next
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.told:
			w.lock()
			w.mu.Unlock()
		case <-flush.C:
			_ = w.evs.Flush()
			_ = w.samples.Flush()
		case <-t.C:
			if now := w.o.Clock.WallNow(); now.Sub(last) >= gap {
				last = now
				gap = max(minSampleWall, sampleShare*w.sample(ctx, p))
			}
		}
	}
}

// sample takes one sample of the proxy and the server, and returns the wall time of its own
// work, after the scrape.
func (w *Watcher) sample(ctx context.Context, p *Proxy) time.Duration {
	var reading scrape.Reading
	if w.scraper != nil {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		reading = w.scraper.Scrape(sctx)
		cancel()
	}
	start := w.o.Clock.WallNow()
	open, now := p.Open()
	w.lock()
	defer w.mu.Unlock()
	s := events.Sample{TS: now, Wall: w.o.Clock.WallNow().UTC().Format(time.RFC3339Nano), InFlight: len(open),
		TokensOut: w.tokensOut, ServerErrors: reading.Errors}
	if len(reading.Gauges) > 0 {
		s.Server = reading.Gauges
	}
	s.ChunksIn = w.chunksIn
	for _, r := range open {
		e := w.event(events.RequestSent, r.Seen, now)
		id := e.Agent
		st := events.Stream{Request: e.Request, Agent: id, SentAgoS: now - r.SentS,
			SinceLastByteS: now - r.LastByteS, Chunks: r.Chunks}
		s.Streams = append(s.Streams, st)
		s.OldestSilenceS = max(s.OldestSilenceS, st.SinceLastByteS)
		s.ChunksIn += int64(r.Chunks)
	}
	s.Agents = map[events.State]int{events.StateRequesting: len(open), events.StateThinking: len(w.agents) - len(open)}
	if w.procs != nil {
		s.Agents = w.procs.states(len(open))
	}
	s.Bound(w.stallS)
	w.samples.Write(s)
	w.a.Sample(s)
	w.report(now)
	return w.o.Clock.WallNow().Sub(start)
}

// quantities matches a number with its unit, if any, in a verdict's summary.
var quantities = regexp.MustCompile(`[0-9][0-9.,]*( ?(ms|µs|s|%|tok/s))?`)

// report prints the verdict when it changes: its kind, or its summary other than numbers (a
// run's stall warning is here a verdict of its own).
func (w *Watcher) report(now float64) {
	v := w.a.Verdict(now)
	shape := string(v.Kind) + ": " + quantities.ReplaceAllString(v.Summary, "#")
	if shape == w.lastShape {
		return
	}
	w.lastShape = shape
	if w.o.Out != nil {
		fmt.Fprintf(w.o.Out, "watch t=%s: %s — %s\n", results.Seconds(now), v.Kind, v.Summary)
	}
}

// Verdict returns the verdict at the proxy's time now, with its evidence.
func (w *Watcher) Verdict(now float64) results.Verdict {
	w.lock()
	defer w.mu.Unlock()
	return w.a.Verdict(now)
}

// Close flushes and closes the files; call it after the proxy's Close.
func (w *Watcher) Close() error {
	w.lock()
	defer w.mu.Unlock()
	return errors.Join(w.evs.Close(), w.samples.Close())
}
