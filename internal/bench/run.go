package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// Run runs one test per element of o.Concurrency, in order, through the harness, and returns
// the report — also written to o.Dir/results.json. Unless o.Choice carries the model, it first
// prepares the benchmark (Prepare: one GET /v1/models, before anything is sent) and says on
// o.Out why the model sent is not the one asked for. Cancelling ctx (the interrupt) cancels
// the requests in flight, skips the remaining tests and marks the report interrupted. Errors
// are failures to start: bad options, the server unreachable, the run directory not
// writable. Failed requests are data.
func Run(ctx context.Context, o Options) (*Report, error) {
	o.settle()
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Choice == nil {
		var p *harness.Prepared
		var err error
		if o, p, err = Prepare(ctx, o); err != nil {
			return nil, err
		}
		if p.Model.Note != "" {
			fmt.Fprintln(o.Out, p.Model.Note)
		}
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.HTTPClient == nil {
		o.HTTPClient = harness.NewHTTPClient(o.maxConcurrency())
		defer o.HTTPClient.CloseIdleConnections() // ours: no connection outlives the run
	}
	o.Model = o.Choice.Name
	b := &bench{o: o, live: &live{out: o.Out, sweep: o.Sweep}}
	return b.execute(ctx)
}

// Prepare settles the benchmark with its server before anything is sent: harness.Prepare of
// its first test asks GET /v1/models once, chooses the model — o.Model, else the one the
// server serves (the first it lists) — and, when o.Clock is nil, adopts the speedup an
// agentsim server advertises. It returns o carrying the answer (Served, Choice, Model, Clock)
// for Run, and what was settled.
func Prepare(ctx context.Context, o Options) (Options, *harness.Prepared, error) {
	o.settle()
	v := o
	if v.Clock == nil {
		v.Clock = clock.Real() // not checked: Prepare makes it
	}
	if err := v.Validate(); err != nil {
		return o, nil, err
	}
	// Without a model asked for, the defaults' name stands in for none (AnyModel).
	w, err := o.workload(cmp.Or(o.Model, workloads.Defaults().Model), 0, o.Concurrency[0])
	if err != nil {
		return o, nil, err
	}
	p, err := harness.Prepare(ctx, harness.Options{Workload: w, Clock: o.Clock, Target: o.Target, HTTPClient: o.HTTPClient,
		Served: o.Served, PinModel: o.Model != "", AnyModel: o.Model == ""})
	if err != nil {
		return o, nil, err
	}
	o.Served, o.Choice, o.Model, o.Clock = p.Served, &p.Model, p.Model.Name, p.Clock
	return o, p, nil
}

// bench is one Run in progress.
type bench struct {
	o    Options
	live *live
}

// execute runs the tests, prints their results and writes results.json.
func (b *bench) execute(ctx context.Context) (*Report, error) {
	o := b.o
	rep := &Report{Server: o.Target.Server(), Speedup: o.Clock.Speedup(), Model: o.Model, MaxTokens: o.MaxTokens,
		PromptTokens: o.PromptTokens, Sweep: o.Sweep, Open: o.Open}
	start, wallFrom := o.Clock.Now(), o.Clock.WallNow()
	for i, n := range o.Concurrency {
		if ctx.Err() != nil {
			break
		}
		if o.Sweep { // the sweep's progress: a test may take minutes at speedup 1
			fmt.Fprintf(o.Out, "test %d/%d: %s at once, %.0f s simulated so far\n", i+1, len(o.Concurrency), plural.Of(n, "request"), o.Clock.Since(start).Seconds())
		}
		p, err := b.test(ctx, i, n, start)
		if err != nil {
			return nil, err
		}
		rep.Points = append(rep.Points, p)
		fmt.Fprintln(o.Out, p.ResultLine(o.MaxTokens))
		if !o.Sweep {
			p.printDetails(o.Out, o.PromptTokens, o.MaxTokens)
		}
		p.printLatencies(o.Out)
	}
	rep.Interrupted = ctx.Err() != nil
	for _, p := range rep.Points {
		rep.SimSeconds += p.WallS()
	}
	rep.WallSeconds = o.Clock.WallNow().Sub(wallFrom).Seconds()
	if o.Sweep {
		rep.PrintCurve(o.Out)
	}
	return rep, results.Write(o.Dir, rep.Results())
}

// test runs n requests at once (the test-th test of the run, which started at runStart) as a
// harness run and returns what it measured: the harness's results and, from its tap, every
// request's result and frames.
func (b *bench) test(ctx context.Context, test, n int, runStart time.Time) (*Point, error) {
	o := b.o
	w, err := o.workload(o.Model, test, n)
	if err != nil {
		return nil, err
	}
	dir := o.Dir
	if o.Sweep {
		dir = filepath.Join(o.Dir, rundir.BenchTest(n))
	}
	p := &Point{Concurrency: n, speedup: o.Clock.Speedup(), open: o.Open}
	var mu sync.Mutex
	calls, frames := make([]*agents.Result, n), make([][]time.Time, n)
	ended := func(agent int, r agents.Result, f []time.Time) {
		mu.Lock()
		calls[agent], frames[agent] = &r, f
		mu.Unlock()
	}
	sampled := func(s events.Sample, metrics string) {
		p.Samples = append(p.Samples, s)
		b.live.sample(s, metrics)
	}
	ho := harness.Options{Tap: ended,
		Command: "bench", Workload: w, Clock: o.Clock, Target: o.Target, Dir: dir, Observer: b.live, HTTPClient: o.HTTPClient,
		Sampled: sampled, Served: o.Served, Model: o.Choice, Metrics: o.Metrics,
	}
	if o.Open != nil {
		ho.Scripts = scripts(o.schedule, o.PromptTokens, o.MaxTokens)
		ho.Load = fmt.Sprintf("open loop: %s (%s, an agent each)", o.Open, plural.Of(len(o.schedule), "request"))
	}
	if ho.Prepared, err = harness.Prepare(ctx, ho); err != nil {
		return nil, err
	}
	for _, n := range ho.Prepared.Notes { // the model's was said before the first test
		fmt.Fprintln(o.Out, n)
	}
	p.Start = o.Clock.Now()
	p.offsetS = p.Start.Sub(runStart).Seconds()
	if p.Results, err = harness.Run(ctx, ho); err != nil {
		return nil, err
	}
	p.Cut = p.Results.Interrupted
	b.live.end(p.Results.Server.Metrics)
	mu.Lock()
	defer mu.Unlock()
	for i, c := range calls {
		if c == nil { // an agent stopped before sending sent nothing
			continue
		}
		p.Calls, p.chunks = append(p.Calls, *c), append(p.chunks, frames[i])
		if c.Sent.Before(p.Start) || len(p.Calls) == 1 {
			p.Start = c.Sent // the harness starts the agents a moment after it is called
		}
	}
	return p, nil
}

// Files names what the run left in its directory, relative to it: a test's files, or for a
// sweep results.json and one subdirectory per test run (an interrupted sweep's tests never
// started have none).
func (r *Report) Files() string {
	if !r.Sweep {
		return "{" + strings.Join(rundir.Files, ", ") + "}"
	}
	dirs := make([]string, len(r.Points))
	for i, p := range r.Points {
		dirs[i] = rundir.BenchTest(p.Concurrency) + "/"
	}
	return "{" + rundir.Results + ", " + strings.Join(dirs, ", ") + "}"
}
