package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/agents"
	"github.com/agentsim/agentsim/internal/scrape"
	"github.com/agentsim/agentsim/policy"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// checkTimeout is how long, in wall time, the server has to answer GET /v1/models before
// anything is sent.
const checkTimeout = 5 * time.Second

// Run checks that the server answers (before anything is sent), picks the model, then runs one
// test per element of o.Concurrency, in order, and returns the report — also written to o.Dir
// when set. Cancelling ctx (the interrupt) cancels the requests in flight, skips the remaining
// tests and marks the report interrupted. Errors are failures to start: bad options, the
// server unreachable, the run directory not writable. Failed requests are data.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.HTTPClient == nil {
		o.HTTPClient = harness.NewHTTPClient(o.maxConcurrency())
		defer o.HTTPClient.CloseIdleConnections() // ours: no connection outlives the run
	}
	if len(o.Target.MetricsURLs) == 0 {
		o.Target.MetricsURLs = []string{o.Target.URL + "/metrics"}
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if err := harness.CheckServer(ctx, o.HTTPClient, o.Target.URL, o.Target.APIKey, checkTimeout); err != nil {
		return nil, err
	}
	if o.Model == "" {
		o.Model = discoverModel(ctx, o.HTTPClient, o.Target.URL, o.Target.APIKey)
	}
	b, err := newBench(o)
	if err != nil {
		return nil, err
	}
	return b.execute(ctx)
}

// bench is one Run in progress.
type bench struct {
	o        Options
	client   *agents.Client
	scraper  *scrape.Scraper
	samples  *events.Writer[events.Sample] // nil without a run directory
	start    time.Time                     // simulated
	wallFrom time.Time
	shown    bool // the server-metrics line has been printed
}

func newBench(o Options) (*bench, error) {
	b := &bench{o: o, start: o.Clock.Now(), wallFrom: o.Clock.WallNow(),
		client:  agents.NewClient(o.Target.URL+"/v1", o.Target.APIKey, o.HTTPClient, o.Clock),
		scraper: scrape.New(o.Target.MetricsURLs, o.HTTPClient, o.Clock)}
	if o.Dir == "" {
		return b, nil
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	var err error
	if b.samples, err = events.Create[events.Sample](filepath.Join(o.Dir, "samples.jsonl")); err != nil {
		return nil, err
	}
	return b, nil
}

// execute runs the tests, prints their results and writes the run directory.
func (b *bench) execute(ctx context.Context) (*Report, error) {
	rep := &Report{Server: b.o.Target.Server(), Speedup: b.o.Clock.Speedup(), Model: b.o.Model, MaxTokens: b.o.MaxTokens, PromptTokens: b.o.PromptTokens, Sweep: b.o.Sweep}
	for i, n := range b.o.Concurrency {
		if ctx.Err() != nil {
			break
		}
		p := b.test(ctx, i, n)
		rep.Points = append(rep.Points, p)
		fmt.Fprintln(b.o.Out, p.ResultLine(b.o.MaxTokens))
		if !b.o.Sweep {
			p.printDetails(b.o.Out, b.o.PromptTokens)
		}
	}
	rep.Interrupted = ctx.Err() != nil
	for _, p := range rep.Points {
		rep.SimSeconds += p.WallS()
	}
	rep.WallSeconds = b.o.Clock.WallNow().Sub(b.wallFrom).Seconds()
	rep.Metrics = b.scraper.Found()
	if b.o.Sweep {
		rep.PrintCurve(b.o.Out)
	}
	return rep, b.write(rep)
}

// write closes samples.jsonl and writes results.json, when there is a run directory.
func (b *bench) write(rep *Report) error {
	if b.samples == nil {
		return nil
	}
	if err := b.samples.Close(); err != nil {
		return err
	}
	return results.Write(b.o.Dir, rep.Results())
}

// test sends n requests at once (the round-th test of the run), samples until every one has
// ended, and returns what it measured.
func (b *bench) test(ctx context.Context, round, n int) *Point {
	reqs := make([]agents.Request, n)
	for i := range reqs {
		reqs[i] = b.request(round, i)
	}
	calls, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &Point{Concurrency: n, streams: make([]*stream, n)}
	var wg sync.WaitGroup
	p.Start = b.o.Clock.Now()
	for i := range reqs {
		s := &stream{}
		p.streams[i] = s
		wg.Go(func() { s.run(calls, b.client, reqs[i], b.o.Clock.Now()) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }() // ends when every call has returned
	b.sampleUntil(done, p)
	p.End = b.o.Clock.Now()
	p.Interrupted = ctx.Err() != nil
	p.collect()
	return p
}

// request is the i-th request of the round-th test: a user message of PromptTokens words,
// exactly MaxTokens output tokens.
func (b *bench) request(round, i int) agents.Request {
	prompt := workloads.Text(b.o.Seed, i, round, "bench", b.o.PromptTokens)
	return agents.Request{
		Model:     b.o.Model,
		Messages:  []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: prompt}},
		MaxTokens: b.o.MaxTokens, IgnoreEOS: true,
		Timeouts: policy.Timeouts{Request: b.o.Timeout},
	}
}
