package tracefit

import (
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentsim/agentsim/pacer"
	"github.com/agentsim/agentsim/trace"
	"github.com/agentsim/agentsim/workloads"
)

// Quantity is one fitted quantity of the workload: the data's sorted values and the fits.
type Quantity struct {
	// Key is the workload key it sets ("request.output_tokens"); Unit "tokens" or "s".
	Key, Unit string
	// Data are the observations, sorted.
	Data []float64
	// Fits are every kind's fit; Chosen the one the workload uses; Note why, when it is not
	// the best.
	Fits   []Fit
	Chosen Fit
	Note   string
}

// Result is a fitted workload and how well it fits.
type Result struct {
	Workload   *workloads.Workload
	Quantities []Quantity
	// Notes say what the fit assumed: how rounds and agents were chosen, what the trace lacked.
	Notes []string
}

// firstFraming is the chat framing of an agent's first prompt, in tokens: 4 for each of its
// two messages (task and read) and 3 for the prompt, as the simulator counts them.
const firstFraming = 2*4 + 3

// sessionData is what the fit keeps of one session.
type sessionData struct {
	requests    int
	firstPrompt int
	firstT      float64
	prevE2E     float64 // the previous request's e2e_s, 0 when unknown
	tools       toolState
}

// Options adjust the fit.
type Options struct {
	// Name is the workload's name ("" : "fit").
	Name string
	// Agents, when > 0, replaces the fitted number of agents (the sessions), to scale the
	// workload.
	Agents int
}

// FromTrace reads the trace in r (named name in errors) one request at a time and fits a
// workload to it. It keeps a few numbers per request and per session, never the requests.
func FromTrace(r io.Reader, name string, o Options) (*Result, error) {
	rd, err := trace.NewReader(r, name)
	if err != nil {
		return nil, err
	}
	fromSend := rd.Header().AfterSFrom == trace.AfterSend
	sessions := map[string]*sessionData{}
	var read, output, think []float64
	var tools toolData
	models, efforts, apis := map[string]int{}, map[string]int{}, map[string]int{}
	maxPrompt, maxOutput, n := 0, 0, 0
	thinkFromSend := 0
	for {
		req, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		n++
		s := sessions[req.Session]
		first := s == nil
		if first {
			s = &sessionData{firstPrompt: req.PromptTokens, firstT: req.TS}
			sessions[req.Session] = s
		}
		toolS := tools.add(&req, &s.tools)
		if !first {
			if req.Extends != nil {
				read = append(read, float64(req.NewTokens))
			}
			t := req.AfterS - toolS
			if fromSend {
				if s.prevE2E > 0 {
					t = max(0, t-s.prevE2E)
				} else {
					thinkFromSend++
				}
			}
			think = append(think, t)
		}
		s.requests++
		s.prevE2E = req.E2ES
		output = append(output, float64(req.OutputTokens))
		maxPrompt, maxOutput = max(maxPrompt, req.PromptTokens), max(maxOutput, req.OutputTokens)
		models[req.Model]++
		efforts[req.ReasoningEffort]++
		apis[req.API]++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: the trace has no request to fit", name)
	}
	res := &Result{}
	w := workloads.Defaults()
	w.Name = workloadName(o.Name)
	w.Duration, w.Grace = 0, 30*time.Second
	w.Pacer = pacer.Config{Kind: "unlimited"}
	res.fitSessions(&w, sessions, o)
	defs := tools.defs
	if tools.any {
		res.fitTools(&w, &tools)
		read = nil // the new tokens are tool results and task messages, fitted there
		if defs == nil {
			defs = []float64{} // a tool loop, though its definitions' size is unknown
		}
	}
	res.fitTokens(&w, sessions, read, output, maxPrompt, maxOutput, defs)
	res.fitThink(&w, think)
	if thinkFromSend > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("think_time: %d gaps count from the previous send (the trace has no e2e_s there): they include that request's duration", thinkFromSend))
	}
	if m := mostCommon(models); m != "" {
		w.Model = m
	}
	if e := mostCommon(efforts); e != "" && slices.Contains(workloads.ReasoningEfforts, e) {
		w.Request.ReasoningEffort = e
	}
	if mostCommon(apis) == trace.APIResponses {
		w.Request.API = workloads.APIResponses // chat and legacy completions fit as chat
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("the fitted workload is not valid: %w", err)
	}
	res.Workload = &w
	return res, nil
}

// fitSessions sets agents (one per session), rounds (the mean requests per session, so the
// workload sends as many requests as the trace) and the start jitter (the sessions' first
// sends).
func (res *Result) fitSessions(w *workloads.Workload, sessions map[string]*sessionData, o Options) {
	var per, first []float64
	for _, s := range sessions {
		per = append(per, float64(s.requests))
		first = append(first, s.firstT)
	}
	slices.Sort(per)
	slices.Sort(first)
	mean, _ := moments(per)
	w.Agents = min(len(sessions), 10000)
	w.Rounds = max(1, int(math.Round(mean)))
	res.Notes = append(res.Notes, fmt.Sprintf("agents: %d, one per session; rounds: %d, the mean requests per session (median %.0f, max %.0f), so the workload sends about as many requests as the trace (%d)",
		w.Agents, w.Rounds, quantile(per, 0.5), per[len(per)-1], int(sum(per))))
	if len(sessions) > 10000 {
		res.Notes = append(res.Notes, fmt.Sprintf("agents: the trace has %d sessions; a workload runs at most 10000 agents", len(sessions)))
	}
	if o.Agents > 0 {
		w.Agents = o.Agents
		res.Notes = append(res.Notes, fmt.Sprintf("agents: %d, as asked (--agents)", o.Agents))
	}
	w.StartJitter = seconds(first[len(first)-1] - first[0])
}

// fitTokens sets the initial, read and output tokens and the context window. defs are the
// sizes of the tool definitions requests offered (sorted), which a first prompt includes;
// nil for a trace without tools, whose new tokens are reads.
func (res *Result) fitTokens(w *workloads.Workload, sessions map[string]*sessionData, read, output []float64, maxPrompt, maxOutput int, defs []float64) {
	var firsts []float64
	for _, s := range sessions {
		firsts = append(firsts, float64(s.firstPrompt))
	}
	slices.Sort(firsts)
	w.Context.SystemTokens = 0
	w.Context.ReadTokens = workloads.Const(0)
	// An agent's first prompt is its task, its first read and the chat framing of those two
	// messages (firstFraming tokens): the task is what is left of the first prompt.
	readMedian := 0
	if len(read) > 0 {
		q := res.quantity("context.read_tokens", "tokens", read, func(Fit) bool { return true }, "")
		w.Context.ReadTokens = tokenDist(q.Chosen)
		readMedian = int(quantile(q.Data, 0.5))
	} else if defs == nil {
		res.Notes = append(res.Notes, "context.read_tokens: 0; no request extends an earlier one, so contexts do not grow")
	}
	q := res.quantity("request.output_tokens", "tokens", output, func(f Fit) bool { return f.least() >= 1 },
		"forced output lengths (force_output_length) need a distribution that never gives 0")
	w.Request.OutputTokens = tokenDist(q.Chosen)
	w.Request.ForceOutputLength = q.Chosen.least() >= 1
	w.Request.MaxTokens = max(1, maxOutput, int(math.Ceil(q.Chosen.Quantile(0.999))))
	w.Context.MaxContextTokens = max(131072, maxPrompt+w.Request.MaxTokens)
	less := "the median read"
	if len(defs) > 0 {
		// A tool loop's first prompt is its task and the tool definitions; it reads nothing.
		readMedian, less = int(quantile(defs, 0.5)), "the median tool definitions"
	}
	w.Context.InitialTokens = max(1, int(quantile(firsts, 0.5))-readMedian-firstFraming)
	res.Notes = append(res.Notes, fmt.Sprintf("context.initial_tokens: %d, the median first prompt of a session (%.0f; p10 %.0f, p90 %.0f) less %s and %d tokens of framing",
		w.Context.InitialTokens, quantile(firsts, 0.5), quantile(firsts, 0.1), quantile(firsts, 0.9), less, firstFraming))
}

// fitThink sets the think time between requests, less the tool time before them; the read
// step's tool time stays 0.
func (res *Result) fitThink(w *workloads.Workload, think []float64) {
	if len(think) == 0 {
		w.ThinkTime = workloads.ConstDuration(0)
		res.Notes = append(res.Notes, "think_time: 0s; every session has one request")
		return
	}
	q := res.quantity("think_time", "s", think, func(Fit) bool { return true }, "")
	w.ThinkTime = durationDist(q.Chosen)
	w.ToolTime = workloads.ConstDuration(0)
	if zeros := len(q.Data) - len(positive(q.Data)); zeros > 0 && w.Tools.Enabled() {
		rest := positive(q.Data)
		note := fmt.Sprintf("think_time: %d of %d gaps are 0 once the tool time is taken out (a proxy sees a tool's time as the whole gap)", zeros, len(q.Data))
		if len(rest) > 0 {
			note += fmt.Sprintf("; the other %d, mostly between tasks: p50 %.3f s, p90 %.3f s", len(rest), quantile(rest, 0.5), quantile(rest, 0.9))
		}
		res.Notes = append(res.Notes, note)
	}
}

// positive returns the values of sorted xs above 0, sorted.
func positive(xs []float64) []float64 {
	i, _ := slices.BinarySearchFunc(xs, 0.0, func(x, t float64) int {
		if x <= t {
			return -1
		}
		return 1
	})
	return xs[i:]
}

// quantity fits data, keeps the best fit that keep allows, and records it.
func (res *Result) quantity(key, unit string, data []float64, keep func(Fit) bool, why string) Quantity {
	return res.quantityOf(key, unit, data, candidates, keep, why)
}

// quantityOf is quantity with the candidates fit gives.
func (res *Result) quantityOf(key, unit string, data []float64, fit func([]float64) []Fit, keep func(Fit) bool, why string) Quantity {
	slices.Sort(data)
	q := Quantity{Key: key, Unit: unit, Data: data, Fits: fit(data)}
	q.Chosen = best(q.Fits, keep)
	if b := best(q.Fits, func(Fit) bool { return true }); b.Kind != q.Chosen.Kind {
		q.Note = fmt.Sprintf("%s fits better (KS %.3f) but %s", b.Kind, b.KS, why)
	}
	res.Quantities = append(res.Quantities, q)
	return q
}

// tokenDist is the workload distribution of a fit in tokens.
func tokenDist(f Fit) workloads.Dist {
	r := func(x float64) int { return int(math.Round(x)) }
	switch f.Kind {
	case workloads.DistUniform:
		return workloads.Dist{Kind: f.Kind, Min: r(f.Min), Max: r(f.Max)}
	case workloads.DistNormal, workloads.DistLognormal:
		if r(f.Mean) < 1 && f.Kind == workloads.DistLognormal {
			return workloads.Const(0)
		}
		return workloads.Dist{Kind: f.Kind, Avg: r(f.Mean), StdDev: r(f.StdDev)}
	case workloads.DistExp:
		if r(f.Mean) < 1 {
			return workloads.Const(0)
		}
		return workloads.Dist{Kind: f.Kind, Avg: r(f.Mean)}
	case workloads.DistMixture:
		d := workloads.Dist{Kind: f.Kind}
		for i, v := range f.Values {
			d.Parts = append(d.Parts, workloads.Part{Weight: math.Round(f.Shares[i]*1e4) / 1e4, Dist: workloads.Const(r(v))})
		}
		return d
	}
	return workloads.Const(r(f.Value))
}

// durationDist is the workload distribution of a fit in seconds, to the millisecond.
func durationDist(f Fit) workloads.DurationDist {
	switch f.Kind {
	case workloads.DistUniform:
		return workloads.DurationDist{Kind: f.Kind, Min: seconds(f.Min), Max: seconds(f.Max)}
	case workloads.DistNormal, workloads.DistLognormal:
		if seconds(f.Mean) <= 0 && f.Kind == workloads.DistLognormal {
			return workloads.ConstDuration(0)
		}
		return workloads.DurationDist{Kind: f.Kind, Avg: seconds(f.Mean), StdDev: seconds(f.StdDev)}
	case workloads.DistExp:
		if seconds(f.Mean) <= 0 {
			return workloads.ConstDuration(0)
		}
		return workloads.DurationDist{Kind: f.Kind, Avg: seconds(f.Mean)}
	}
	return workloads.ConstDuration(seconds(f.Value))
}

// seconds rounds s seconds to the millisecond.
func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s*1000)) * time.Millisecond
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// mostCommon returns the most frequent non-empty key, ties to the smallest.
func mostCommon(m map[string]int) string {
	best, n := "", 0
	for k, c := range m {
		if k != "" && (c > n || (c == n && k < best)) {
			best, n = k, c
		}
	}
	return best
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// workloadName makes name a valid workload name.
func workloadName(name string) string {
	name = strings.Trim(unsafeName.ReplaceAllString(name, "-"), "-")
	if name == "" {
		return "fit"
	}
	return name
}
