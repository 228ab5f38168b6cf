package calibrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// Defaults for Options.
const (
	DefaultMaxConcurrency = 32
	DefaultMaxPrompt      = 16384
	DefaultRepeats        = 2
	DefaultBudget         = 8 * time.Minute
)

// Options configures the experiments against one server.
type Options struct {
	// Client reaches the server and times the requests.
	Client *Client
	// MaxConcurrency is the most requests sent at once.
	MaxConcurrency int
	// MaxPrompt is the longest prompt sent, agentsim's estimate of its tokens.
	MaxPrompt int
	// ChunkTokens is the server's prefill batch (llama.cpp's n_batch, vLLM's
	// max_num_batched_tokens), in server tokens, by which the interference probe tells the
	// colocated engines apart; it must be > 0.
	ChunkTokens int
	// Repeats is how many times each point runs, with fresh prompts, to measure the server's
	// own spread; at least 1.
	Repeats int
	// Budget bounds the experiments' total time on the Client's clock: the plan is cut to fit
	// it before it starts, and what has not run when it is spent is skipped.
	Budget time.Duration
	// Seed makes the prompts.
	Seed int64
	// Out receives the plan and one progress line per point (nil: nothing).
	Out io.Writer
}

// Validate reports every option out of range at once.
func (o *Options) Validate() error {
	var errs []error
	if o.Client == nil {
		errs = append(errs, errors.New("client: nil is not allowed"))
	}
	if o.MaxConcurrency < 1 {
		errs = append(errs, fmt.Errorf("max concurrency: %d is not allowed: want at least 1", o.MaxConcurrency))
	}
	if o.MaxPrompt < 64 {
		errs = append(errs, fmt.Errorf("max prompt: %d tokens is not allowed: want at least 64", o.MaxPrompt))
	}
	if o.ChunkTokens < 1 {
		errs = append(errs, fmt.Errorf("chunk tokens: %d is not allowed: want at least 1", o.ChunkTokens))
	}
	if o.Repeats < 1 {
		errs = append(errs, fmt.Errorf("repeats: %d is not allowed: want at least 1", o.Repeats))
	}
	if o.Budget <= 0 {
		errs = append(errs, fmt.Errorf("budget: %s is not allowed: want more than 0s", o.Budget))
	}
	return errors.Join(errs...)
}

// Data is what the experiments measured: every point's requests, per repeat, and the
// experiments or points skipped, with the reason.
type Data struct {
	// URL and Model are the server's; At is when the experiments started (wall time).
	URL, Model string
	At         time.Time
	// Points are the points run, in order.
	Points []Measured
	// Refused are the points none of whose requests completed, kept for what their failures
	// tell: a KV pool that fails every request mid-stream when it fills.
	Refused []Measured
	// Skipped says, per experiment, why it (or part of it) did not run.
	Skipped map[string][]string
	// Elapsed is the experiments' total time on the Client's clock.
	Elapsed time.Duration
	// References are the reference requests sent between the experiments, in order: the
	// server's speed over the calibration (runner.reference, Fit.Speed).
	References []ReferenceObs
}

// ReferenceObs is one reference request of a calibration: At its start, since the
// experiments', and Prompt its fresh prompt (agentsim's estimate).
type ReferenceObs struct {
	At     time.Duration
	Prompt int
	Obs    Obs
}

// referencesPlanned is how many reference requests a calibration sends: before the first
// experiment after the largest batch, after the prompt lengths, the turn probes and the
// interference probe, and at the end.
const referencesPlanned = 5

// Measured is one point's requests, one slice per repeat.
type Measured struct {
	Point Point
	Runs  [][]Obs
}

// OK returns the point's completed requests, over every repeat.
func (m *Measured) OK() []Obs {
	var ok []Obs
	for _, r := range m.Runs {
		for _, o := range r {
			if o.OK() {
				ok = append(ok, o)
			}
		}
	}
	return ok
}

// Of returns the measured points of an experiment.
func (d *Data) Of(exp string) []*Measured {
	var ms []*Measured
	for i := range d.Points {
		if d.Points[i].Point.Exp == exp {
			ms = append(ms, &d.Points[i])
		}
	}
	return ms
}

// skip records why an experiment, or part of it, did not run.
func (d *Data) skip(exp, reason string) {
	if d.Skipped == nil {
		d.Skipped = map[string][]string{}
	}
	d.Skipped[exp] = append(d.Skipped[exp], reason)
}

// runner runs the experiments.
type runner struct {
	o       Options
	d       *Data
	start   time.Time
	next    int // the next prompt's number
	step    time.Duration
	ttft    time.Duration
	perTok  time.Duration
	running int // the largest batch found
	// longestOK is the longest prompt a point completed, agentsim's estimate; refused says
	// a longer one was refused.
	longestOK int
	refused   bool
	planned   time.Duration
	// reserve is the planned time of the experiments after the prefix-size probe.
	reserve time.Duration
	done    time.Duration
	points  int
	total   int
}

// Run runs the experiments. It fails only when the server answers no request at all; an
// experiment the server refuses is skipped with its reason (Data.Skipped).
func Run(ctx context.Context, o Options) (*Data, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := &runner{o: o, d: &Data{URL: o.Client.URL, Model: o.Client.Model, At: time.Now()}, start: o.Client.Clock.Now()}
	if err := r.warm(ctx); err != nil {
		return nil, err
	}
	plan := r.plan()
	r.cutToBudget(plan)
	r.planned += referencesPlanned * r.guess(referencePoint(o.MaxPrompt))
	r.printf("plan: %d points in %d experiments, %d repeats each, and %d reference requests between them, about %s (budget %s)\n",
		r.total, len(plan), r.o.Repeats, referencesPlanned, r.planned.Round(time.Second), o.Budget)
	r.batch(ctx, plan[ExpBatch])
	r.reference(ctx)
	// The cheap experiments first, so a budget spent early leaves the expensive ones out.
	for _, exp := range []string{ExpConcurrency, ExpPrompt} {
		r.series(ctx, exp, plan[exp])
	}
	r.reference(ctx)
	r.prefix(ctx, plan[ExpPrefix])
	r.turns(ctx, plan[ExpTurn])
	r.turnsBeside(ctx, plan[ExpTurnBeside])
	r.turnsBeside(ctx, plan[ExpTurnIdle])
	r.reference(ctx)
	// The prefix-size probe goes on while it must, but leaves the experiments after it their
	// planned time.
	r.reserve = 0
	for _, exp := range []string{ExpInterference, ExpContext, ExpKV} {
		for _, p := range plan[exp] {
			r.reserve += r.guess(p)
		}
	}
	r.prefixSize(ctx, plan[ExpPrefixSize])
	r.interference(ctx, plan[ExpInterference])
	r.reference(ctx)
	r.series(ctx, ExpContext, plan[ExpContext])
	r.series(ctx, ExpKV, plan[ExpKV])
	r.reference(ctx)
	r.d.Elapsed = o.Client.Clock.Since(r.start)
	r.printf("done in %s\n", r.d.Elapsed.Round(time.Millisecond))
	return r.d, nil
}

// warm sends one short request and one of 1 024 tokens, for the plan's time estimates; a
// server that answers neither is an error.
func (r *runner) warm(ctx context.Context) error {
	short := r.send(ctx, 32, 16)
	if !short.OK() {
		return fmt.Errorf("server %s answered no calibration request: %s", r.o.Client.URL, short.Err)
	}
	r.step, r.ttft = max(short.TPOT(), time.Millisecond), short.TTFT()
	long := r.send(ctx, min(1024, r.o.MaxPrompt), 2)
	if long.OK() {
		r.perTok = max(long.TTFT()-r.ttft, 0) / 1000
	}
	return nil
}

// send sends one fresh request.
func (r *runner) send(ctx context.Context, tokens, output int) Obs {
	text, est := prompt(r.o.Seed, r.next, tokens)
	r.next++
	return r.o.Client.Send(ctx, Request{Messages: []string{text}, Estimate: est, MaxTokens: output})
}

// guess is a point's expected duration from the warm-up's figures.
func (r *runner) guess(p Point) time.Duration {
	prefill := time.Duration(p.Batch*p.Prompt) * r.perTok
	decode := time.Duration(p.Output) * r.step * time.Duration(1+p.Batch/8)
	switch p.Exp {
	case ExpTurn:
		// The turn after the fresh prompt and its reply: their new tokens, over a cached context.
		prefill += r.ttft + (turnTokens+time.Duration(p.Output))*r.perTok
	case ExpTurnBeside, ExpTurnIdle:
		// The streams' prompts beside the conversation's, its reply and turn beside them.
		prefill = time.Duration((p.Batch+1)*p.Prompt)*r.perTok + r.ttft + (turnTokens+time.Duration(p.Output))*r.perTok
		decode = time.Duration(p.Output) * r.step * time.Duration(1+p.Batch)
	}
	return (r.ttft + prefill + decode) * time.Duration(p.Repeats)
}

// cutToBudget cuts the plan to the budget: one repeat, then the most expensive points, until
// it fits.
func (r *runner) cutToBudget(plan map[string][]Point) {
	sum := func() time.Duration {
		var t time.Duration
		for _, ps := range plan {
			for _, p := range ps {
				t += r.guess(p)
			}
		}
		return t
	}
	budget := r.o.Budget - r.o.Client.Clock.Since(r.start)
	if sum() > budget && r.o.Repeats > 1 {
		r.printf("plan: about %s with %d repeats, over the budget: 1 repeat\n", sum().Round(time.Second), r.o.Repeats)
		r.o.Repeats = 1
		for _, ps := range plan {
			for i := range ps {
				ps[i].Repeats = 1
			}
		}
	}
	for sum() > budget {
		exp, i := r.longest(plan)
		if exp == "" {
			break
		}
		p := plan[exp][i]
		r.d.skip(exp, fmt.Sprintf("%s: left out to fit the budget of %s", p, r.o.Budget))
		plan[exp] = slices.Delete(plan[exp], i, i+1)
	}
	r.planned = sum()
	for _, ps := range plan {
		r.total += len(ps)
	}
}

// longest finds the point expected to take longest, among experiments with more than three
// points left: the cut spares the cheap prompt-length steps and every experiment's first points.
func (r *runner) longest(plan map[string][]Point) (string, int) {
	var best time.Duration
	exp, at := "", 0
	for e, ps := range plan {
		if len(ps) <= 3 {
			continue
		}
		for i, p := range ps {
			if g := r.guess(p); g > best {
				best, exp, at = g, e, i
			}
		}
	}
	return exp, at
}

// over reports whether the budget is spent, and then skips the point.
func (r *runner) over(p Point) bool {
	if r.o.Client.Clock.Since(r.start) < r.o.Budget {
		return false
	}
	r.d.skip(p.Exp, fmt.Sprintf("%s: the budget of %s was spent", p, r.o.Budget))
	return true
}

// flush has every slot let go of what the point before left in it (Flush), once the largest
// batch is known: a server that keeps finished requests' KV in its pool (kv_idle_slots) would
// otherwise have each point's prompts read what earlier points left, which no fit models.
func (r *runner) flush(ctx context.Context) {
	if r.running > 0 {
		Flush(ctx, r.o.Client, r.running, r.o.Seed<<20+int64(r.next))
		r.next++
	}
}

// referencePoint is the reference request's shape (ReferencePrompt, at most maxPrompt).
func referencePoint(maxPrompt int) Point {
	return Point{Exp: "reference", Batch: 1, Prompt: min(ReferencePrompt, maxPrompt), Output: ReferenceOutput, Repeats: 1}
}

// reference sends the reference request after a flush, as calibrate check does before each
// run (docs/calibrate.md §3), so that the profile can say how far the server's speed moved
// over the calibration (Fit.Speed). It is sent whatever the budget: it is one short request.
func (r *runner) reference(ctx context.Context) {
	r.flush(ctx)
	p := referencePoint(r.o.MaxPrompt)
	at := r.o.Client.Clock.Since(r.start)
	o := r.send(ctx, p.Prompt, p.Output)
	r.d.References = append(r.d.References, ReferenceObs{At: at, Prompt: p.Prompt, Obs: o})
	head := fmt.Sprintf("reference %d of %d at %s", len(r.d.References), referencesPlanned, at.Round(time.Second))
	switch {
	case !o.OK():
		r.printf("%s: failed: %s\n", head, o.Err)
	case o.TPOT() == 0:
		r.printf("%s: TTFT %s, one token: no TPOT\n", head, o.TTFT().Round(10*time.Microsecond))
	default:
		r.printf("%s: TTFT %s, TPOT %s\n", head, o.TTFT().Round(10*time.Microsecond), o.TPOT().Round(10*time.Microsecond))
	}
}

// batchOf sends n fresh requests at once and returns them in order.
func (r *runner) batchOf(ctx context.Context, n, tokens, output int) []Obs {
	reqs := make([]Request, n)
	for i := range reqs {
		text, est := prompt(r.o.Seed, r.next, tokens)
		r.next++
		reqs[i] = Request{Messages: []string{text}, Estimate: est, MaxTokens: output}
	}
	obs := make([]Obs, n)
	var wg sync.WaitGroup
	for i := range reqs {
		wg.Go(func() { obs[i] = r.o.Client.Send(ctx, reqs[i]) })
	}
	wg.Wait()
	return obs
}

// measure runs a point's repeats and records it; it returns the point's first error when
// none of its requests completed.
func (r *runner) measure(ctx context.Context, p Point) (*Measured, string) {
	m := Measured{Point: p}
	at := r.o.Client.Clock.Now()
	for range p.Repeats {
		r.flush(ctx)
		m.Runs = append(m.Runs, r.batchOf(ctx, p.Batch, p.Prompt, p.Output))
	}
	r.points++
	took := r.o.Client.Clock.Since(at)
	r.done += took
	ok := m.OK()
	first := firstError(m.Runs)
	line := fmt.Sprintf("[%d/%d] %s: %d of %d ok", r.points, r.total, p, len(ok), p.Batch*p.Repeats)
	if len(ok) > 0 {
		line += fmt.Sprintf(", TTFT %s, TPOT %s", median(ok, (*Obs).TTFT).Round(time.Microsecond), median(ok, (*Obs).TPOT).Round(time.Microsecond))
	}
	if first != "" {
		line += ", first error: " + first
	}
	r.printf("%s (%s; %s of about %s)\n", line, took.Round(time.Millisecond), r.o.Client.Clock.Since(r.start).Round(time.Second), r.planned.Round(time.Second))
	if len(ok) == 0 {
		r.d.Refused = append(r.d.Refused, m)
		return nil, first
	}
	for _, o := range ok {
		if o.CompletionTokens > 0 && o.CompletionTokens < p.Output {
			r.d.skip(p.Exp, fmt.Sprintf("%s: the server sent %d output tokens of the %d asked for (it caps max_tokens or ignores ignore_eos)", p, o.CompletionTokens, p.Output))
			break
		}
	}
	r.longestOK = max(r.longestOK, p.Prompt)
	r.d.Points = append(r.d.Points, m)
	return &r.d.Points[len(r.d.Points)-1], first
}

// series runs an experiment's points in order; a point the server refuses entirely skips it
// and, for prompt lengths (the longer ones fail as well), every point after it.
func (r *runner) series(ctx context.Context, exp string, ps []Point) {
	for i, p := range ps {
		if exp == ExpKV && r.running > 0 {
			p.Batch = min(p.Batch, r.running)
		}
		if exp == ExpKV && r.refused && r.longestOK > 0 {
			p.Prompt = min(p.Prompt, r.longestOK)
		}
		if exp != ExpKV && r.running > 0 && p.Batch > r.running {
			r.d.skip(exp, fmt.Sprintf("%s: above the largest batch the server runs (%d)", p, r.running))
			continue
		}
		if r.over(p) {
			continue
		}
		m, err := r.measure(ctx, p)
		if m != nil && err != "" {
			r.d.skip(exp, fmt.Sprintf("%s: some requests failed, the rest kept: %s", p, err))
		}
		if m == nil {
			r.refused = true
			r.d.skip(exp, fmt.Sprintf("%s: %s", p, err))
			if exp == ExpPrompt || exp == ExpContext {
				for _, q := range ps[i+1:] {
					if q.Prompt >= p.Prompt {
						r.d.skip(exp, fmt.Sprintf("%s: not sent, a shorter prompt was refused", q))
					}
				}
				ps = slices.DeleteFunc(slices.Clone(ps[i+1:]), func(q Point) bool { return q.Prompt >= p.Prompt })
				r.series(ctx, exp, ps)
				return
			}
		}
	}
}

// batch runs the largest-batch point and keeps the batch it found for the concurrency sweep.
func (r *runner) batch(ctx context.Context, ps []Point) {
	for _, p := range ps {
		if r.over(p) {
			return
		}
		m, err := r.measure(ctx, p)
		if m == nil {
			r.d.skip(p.Exp, fmt.Sprintf("%s: %s", p, err))
			return
		}
		r.running = maxRunning(m.Runs[0]).n
	}
}

// firstError is the first failed request's error, "" when none failed.
func firstError(runs [][]Obs) string {
	for _, run := range runs {
		for _, o := range run {
			if o.Err != "" {
				return o.Err
			}
		}
	}
	return ""
}

// median is the median of f over obs.
func median(obs []Obs, f func(*Obs) time.Duration) time.Duration {
	v := make([]time.Duration, len(obs))
	for i := range obs {
		v[i] = f(&obs[i])
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// printf prints to Out, when set.
func (r *runner) printf(format string, a ...any) {
	if r.o.Out != nil {
		fmt.Fprintf(r.o.Out, format, a...)
	}
}
