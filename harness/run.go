package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/internal/redact"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/internal/scrape"
	"github.com/agentsim/agentsim/pacer"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// Run runs the workload to its end and returns the results it also wrote to the run
// directory. It prepares the run first (Prepare: the server asked, the model chosen, the
// context fitted), unless Options.Prepared carries that already. ctx is the interrupt: when it
// is cancelled, new rounds stop, requests in flight are cancelled and results.json says
// "interrupted": true. Errors are harness faults only (server unreachable before the start,
// run directory not writable) and Prepare's configuration errors (*ModelError, *FitError);
// request failures are data.
func Run(ctx context.Context, o Options) (*results.Results, error) {
	if o.Prepared == nil {
		p, err := Prepare(ctx, o)
		if err != nil {
			return nil, err
		}
		o.Prepared = p
	}
	return runPrepared(ctx, o)
}

// RunChecked is Run for a caller that has already asked the server (AskServer) and passes its
// answer in Options.Served, or none: it settles what the run sends from that alone and asks
// the server nothing (see Prepare).
func RunChecked(ctx context.Context, o Options) (*results.Results, error) {
	if o.Prepared == nil {
		p, err := settle(o, o.Served)
		if err != nil {
			return nil, err
		}
		o.Prepared = p
	}
	return runPrepared(ctx, o)
}

// runPrepared runs o as o.Prepared settled it.
func runPrepared(ctx context.Context, o Options) (*results.Results, error) {
	p := o.Prepared
	o.Workload, o.Model, o.Clock = p.Workload, &p.Model, p.Clock
	if o.HTTPClient == nil {
		o.HTTPClient = NewHTTPClient(o.Workload.Agents)
	}
	r, err := newRun(o)
	if err != nil {
		return nil, err
	}
	defer r.close()
	return r.execute(ctx)
}

// run is one run in progress.
type run struct {
	o        Options
	start    time.Time
	wallFrom time.Time
	pace     *MaxPace // the --speedup max controller; nil at a fixed speedup
	log      *events.Log
	samples  *events.Writer[events.Sample]
	board    *agents.Board
	pacer    pacer.Pacer
	scraper  *scrape.Scraper
	watch    *watchdog
	// carried is, per agent, how much later than the embedded simulator's model its ended
	// requests ended, summed: nanoseconds, simulated (modelBehind).
	carried []atomic.Int64
	// sentOnce is, per agent, whether it has sent a request (modelBehind).
	sentOnce []atomic.Bool
	metrics  *runMetrics // nil without Options.Metrics
	// inbox holds the events recorded and not yet written; taken is flush's buffer.
	inbox *inbox
	taken []recorded
	// now holds the agents' events of the latest simulated instant (see instant); guarded by mu.
	now instant
	// paceWarned is set once the live warning about the machine's pace has been given.
	paceWarned bool
	// streamWarned is set once the live stream chunking warning was given; only the sampler
	// reads it.
	streamWarned bool
	// lastSampleS is when the previous sample was taken, in simulated seconds since the start;
	// lateWarned is set once the sampler's falling behind was warned about. Only the sampler
	// uses them.
	lastSampleS float64
	lateWarned  bool
	scrapeS     float64  // how long the latest sample's /metrics scrape took, simulated seconds
	roundsEnded int      // rounds ended ok or failed, counted as their events are written; under mu
	notes       []string // what was said before the run: the model chosen, the context window
	fitted      int      // the context window, in tokens, the workload was fitted to; 0 if not
	// checks holds the run's records against what was expected, for its warnings; it is fed
	// every event and sample, under mu.
	checks *diagnose.Checks

	mu sync.Mutex // serialises writing events and samples, and the watchdog's analyzer
}

func newRun(o Options) (*run, error) {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	if err := writeConfig(o); err != nil {
		return nil, err
	}
	o.Clock = o.Clock.Measured() // every wait the harness schedules records its lag
	newPacer := o.NewPacer
	if newPacer == nil {
		newPacer = func(clk *clock.Clock) (pacer.Pacer, error) { return pacer.New(o.Workload.Pacer, clk) }
	}
	p, err := newPacer(o.Clock)
	if err == nil && p == nil {
		err = errors.New("NewPacer returned no pacer")
	}
	if err != nil {
		return nil, fmt.Errorf("pacer: %w", err)
	}
	r := &run{o: o, start: o.Clock.Now(), wallFrom: o.Clock.WallNow(), pacer: p}
	if o.Prepared != nil {
		r.notes, r.fitted = o.Prepared.Said(), o.Prepared.fitted
	}
	r.checks = diagnose.NewChecks(r.fitted)
	r.inbox = newInbox(func(it *recorded) { it.e.TS, it.wall = r.log.Since(), r.o.Clock.WallNow() })
	r.board = agents.NewBoard(o.Workload.Agents, r.start)
	r.scraper = scrape.New(o.Target.metricsURLs(), o.HTTPClient, o.Clock).Authorize(o.Target.APIKey, o.Target.URL)
	judged := o.Workload
	if o.NewPacer != nil {
		// The workload's pacer section does not describe this pacer: the verdict assumes
		// nothing of its design beyond what its Stats show.
		w := *o.Workload
		w.Pacer = pacer.Config{}
		judged = &w
	}
	r.watch = newWatchdog(judged)
	r.carried = make([]atomic.Int64, o.Workload.Agents)
	r.sentOnce = make([]atomic.Bool, o.Workload.Agents)
	if o.Metrics != nil {
		var reg *prometheus.Registry
		r.metrics, reg = newRunMetrics(o.Workload.Watchdog.StallAfter.Seconds())
		o.Metrics.use(reg)
	}
	if r.log, err = events.CreateLog(filepath.Join(o.Dir, rundir.Events), o.Clock, r.start); err != nil {
		r.close()
		return nil, err
	}
	if r.samples, err = events.Create[events.Sample](filepath.Join(o.Dir, rundir.Samples)); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// writeConfig writes the resolved workload, secrets redacted, to config.yaml.
func writeConfig(o Options) error {
	extra := map[string]string{"server": o.Target.URL}
	if o.Target.APIKey != "" {
		extra["api_key"] = o.Target.APIKey
	}
	var reproduce any // a nil *Reproduction must reach Recorded as nil
	if o.Reproduce != nil {
		reproduce = o.Reproduce
	}
	b, err := o.Workload.Recorded(extra, reproduce)
	if err != nil {
		return fmt.Errorf("%s: %w", rundir.Config, err)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, rundir.Config), b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", rundir.Config, err)
	}
	return nil
}

// Record stamps an event and queues it for the log and the watchdog (see inbox).
func (r *run) Record(e events.Event) { r.RecordRef(&e) }

// RecordRef is Record for an event the caller lends and does not use again: it may fill in
// the event's simulator lag, then copies it (agents.RefRecorder).
func (r *run) RecordRef(e *events.Event) {
	if e.Kind == events.RequestSent && e.Agent >= 0 && e.Agent < len(r.sentOnce) && !r.sentOnce[e.Agent].Swap(true) {
		r.sentLate(e.Agent)
	}
	r.recordSimLag(e)
	if r.inbox.put(e) > assistAfter {
		r.assist()
	}
}

// emit writes an event to the log and feeds it to the watchdog. The caller holds mu.
func (r *run) emit(e events.Event) {
	if e.Kind == events.RoundDone && e.Outcome != events.RoundCancelled {
		r.roundsEnded++
	}
	r.log.Write(e)
	r.watch.event(e)
	r.checks.Event(e)
	if r.metrics != nil {
		r.metrics.event(e)
	}
}

// toolSet reads the workload's tool set once for all its agents; nil when it offers none.
func toolSet(w *workloads.Workload) (*workloads.ToolSet, error) {
	if !w.Tools.Enabled() {
		return nil, nil
	}
	set, err := w.Tools.Definitions()
	if err != nil {
		return nil, fmt.Errorf("tools.set: %w", err)
	}
	return set, nil
}

// execute runs the agents with the two-phase stop and assembles the results.
func (r *run) execute(ctx context.Context) (*results.Results, error) {
	w := r.o.Workload
	tools, err := toolSet(w)
	if err != nil {
		return nil, err
	}
	rounds, stopRounds := context.WithCancel(context.Background())
	requests, cancelRequests := context.WithCancel(context.Background())
	defer stopRounds()
	defer cancelRequests()
	bg, stopBG := context.WithCancel(context.Background())
	var bgDone sync.WaitGroup
	bgDone.Go(func() { r.writeEvents(bg) })
	if w.Duration > 0 {
		bgDone.Go(func() {
			if behind, ok := r.untilModel(bg, w.Duration); ok {
				r.stopping(events.EndDuration, fmt.Sprintf("duration %s reached%s: no new rounds; requests in flight have the %s grace period", w.Duration, behindNote(behind), w.Grace))
				stopRounds()
			}
		})
	}
	if r.o.Clock.Adjusts() {
		r.pace = NewMaxPace(r.o.Clock, time.Duration(maxPaceShare*float64(w.Watchdog.StallAfter)), r.o.Clock.Lag(), r.o.Target.SimLag)
		bgDone.Go(func() { r.pace.Run(bg) })
	}
	bgDone.Go(func() { r.log.FlushEvery(bg, r.o.Clock, time.Second) })
	bgDone.Go(func() { r.samples.FlushEvery(bg, r.o.Clock, time.Second) })

	shape := plural.Of(w.Agents, "agent") + " × " + plural.Of(w.Rounds, "round")
	switch {
	case r.o.Load != "":
		shape = r.o.Load
	case r.o.Scripts != nil:
		shape = fmt.Sprintf("%d agents replaying recorded sessions", w.Agents)
	}
	r.Record(events.Event{Kind: events.RunStart, Agent: -1, Message: fmt.Sprintf("%s: %s, pacer %s, server %s, model %s",
		w.Name, shape, r.pacer, redact.URL(r.o.Target.URL), w.Model)})
	for _, n := range r.notes {
		r.Record(events.Event{Kind: events.Warning, Agent: -1, Message: n})
	}
	before, _, _ := r.sample() // the state before any request
	if msg := busy(before); msg != "" {
		r.o.observer().Warned(msg)
		r.Record(events.Event{Kind: events.Warning, Agent: -1, Message: msg})
	}
	bgDone.Go(func() { r.sampleLoop(bg, stopRounds, cancelRequests) })
	env := &agents.Env{Client: agents.NewClient(r.o.Target.URL+"/v1", r.o.Target.APIKey, r.o.HTTPClient, r.o.Clock, r.stamp()),
		Clock: r.o.Clock, Pacer: r.pacer, Workload: w, Recorder: r, Board: r.board,
		Calibration: agents.NewCalibrationOn(r.o.Clock), Tap: r.o.Tap, Scripts: r.o.Scripts, Tools: tools}
	var agentsDone sync.WaitGroup
	for i := range w.Agents {
		agentsDone.Go(func() { agents.NewAgent(i, env).Run(rounds, requests) })
	}
	finished := make(chan struct{})
	go func() { agentsDone.Wait(); close(finished) }()
	interrupted := r.stopPhases(ctx, rounds, finished, stopRounds, cancelRequests)
	<-finished

	stopBG()
	bgDone.Wait()
	r.sample() // the final state
	r.Record(events.Event{Kind: events.RunEnd, Agent: -1})
	r.mu.Lock()
	r.flush(-1)
	r.mu.Unlock()
	res := r.results(interrupted)
	if err := r.closeLogs(); err != nil {
		return res, err
	}
	if err := results.Write(r.o.Dir, res); err != nil {
		return res, err
	}
	return res, nil
}

// stopPhases waits for the agents to finish, enforcing the two-phase stop: once new rounds
// have stopped (duration, watchdog or interrupt), requests in flight get the grace period, or
// none on an interrupt or a hang. It reports whether the run was interrupted.
func (r *run) stopPhases(ctx context.Context, rounds context.Context, finished <-chan struct{}, stopRounds, cancelRequests func()) bool {
	select {
	case <-finished:
		return false
	case <-ctx.Done():
		r.stopping(events.EndInterrupted, "interrupted: no new rounds, requests in flight cancelled")
		stopRounds()
		cancelRequests()
		return true
	case <-rounds.Done():
	}
	if r.watch.ended() {
		cancelRequests()
		return false
	}
	// The grace period, too, is the model's: it ends grace after the model's time at the stop.
	model, _ := r.modelNow()
	waiting, stopWaiting := context.WithCancel(context.Background())
	over := make(chan time.Duration, 1)
	var graceDone sync.WaitGroup
	graceDone.Go(func() {
		if behind, ok := r.untilModel(waiting, model+r.o.Workload.Grace); ok {
			over <- behind
		}
	})
	defer graceDone.Wait()
	defer stopWaiting()
	select {
	case <-finished:
		return false
	case behind := <-over:
		r.stopping(events.EndGrace, fmt.Sprintf("grace period of %s over%s: requests in flight cancelled", r.o.Workload.Grace, behindNote(behind)))
		cancelRequests()
		return false
	case <-ctx.Done():
		r.stopping(events.EndInterrupted, "interrupted: requests in flight cancelled")
		cancelRequests()
		return true
	}
}

// stopping records why the run is stopping, before the stop cancels anything.
func (r *run) stopping(reason events.EndReason, why string) {
	r.Record(events.Event{Kind: events.Stop, Agent: -1, Reason: reason, Message: why})
}
