package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/results"
)

// Run checks that the server answers and picks the model with harness.ChooseModel (one GET
// /v1/models, before anything is sent, unless o.Served and o.Choice carry them), then runs one test per element of o.Concurrency, in order, through the harness, and
// returns the report — also written to o.Dir/results.json. Cancelling ctx (the interrupt)
// cancels the requests in flight, skips the remaining tests and marks the report interrupted.
// Errors are failures to start: bad options, the server unreachable, the run directory not
// writable. Failed requests are data.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.HTTPClient == nil {
		o.HTTPClient = harness.NewHTTPClient(o.maxConcurrency())
		defer o.HTTPClient.CloseIdleConnections() // ours: no connection outlives the run
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Served == nil {
		served, err := harness.AskServer(ctx, o.HTTPClient, o.Target.URL, o.Target.APIKey, harness.CheckTimeout)
		if err != nil {
			return nil, err
		}
		o.Served = served
	}
	if o.Choice == nil {
		c, err := harness.ChooseModel(o.Model, o.Model != "", o.Served, o.Target.URL)
		if err != nil {
			return nil, err
		}
		if c.Note != "" {
			fmt.Fprintln(o.Out, c.Note)
		}
		o.Choice = &c
	}
	o.Model = o.Choice.Name
	b := &bench{o: o, live: &live{out: o.Out, sweep: o.Sweep}}
	return b.execute(ctx)
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
		PromptTokens: o.PromptTokens, Sweep: o.Sweep}
	start, wallFrom := o.Clock.Now(), o.Clock.WallNow()
	for i, n := range o.Concurrency {
		if ctx.Err() != nil {
			break
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
		dir = filepath.Join(o.Dir, testDir(n))
	}
	p := &Point{Concurrency: n}
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
	p.Start = o.Clock.Now()
	p.offsetS = p.Start.Sub(runStart).Seconds()
	p.Results, err = harness.RunChecked(ctx, harness.Options{Tap: ended,
		Command: "bench", Workload: w, Clock: o.Clock, Target: o.Target, Dir: dir, Observer: b.live, HTTPClient: o.HTTPClient,
		Sampled: sampled, Served: o.Served, Model: o.Choice, Metrics: o.Metrics,
	})
	if err != nil {
		return nil, err
	}
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

// Files names what a run leaves in its directory, relative to it: a test's files, or for a
// sweep results.json and one subdirectory per test.
func Files(o Options) string {
	if !o.Sweep {
		return "{events.jsonl, samples.jsonl, results.json, config.yaml}"
	}
	dirs := make([]string, len(o.Concurrency))
	for i, n := range o.Concurrency {
		dirs[i] = testDir(n) + "/"
	}
	return "{results.json, " + strings.Join(dirs, ", ") + "}"
}

// testDir is the subdirectory of a sweep's test of n requests at once.
func testDir(n int) string { return fmt.Sprintf("n%d", n) }
