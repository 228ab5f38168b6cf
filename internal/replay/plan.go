// Package replay turns a trace (agentsim.trace/v1) into the scripts the harness's agents play
// — one agent per session — and compares a replay's events with the outcomes the trace
// recorded. See docs/trace.md.
package replay

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/trace"
	"github.com/agentsim/agentsim/workloads"
)

// SelectionError is a trace of which the options select nothing to replay, or more sessions
// than a run has agents: Options.Sessions, FromS and ToS choose what is replayed.
type SelectionError struct{ msg string }

// Error says what was selected and which options select it.
func (e *SelectionError) Error() string { return e.msg }

// Mode says how requests are timed.
type Mode string

// The modes.
const (
	// Sessions: each session is a closed loop, request k+1 sent after_s after request k
	// ended, behind the pacer.
	Sessions Mode = "sessions"
	// Timestamps: every request at its recorded t_s, whatever the server does (open loop).
	Timestamps Mode = "timestamps"
)

// Modes lists the modes in the order help shows them.
var Modes = []Mode{Sessions, Timestamps}

// BlockTokens is the length of the prompt block one hash id stands for (Mooncake's 512).
const BlockTokens = 512

// MaxSessions bounds the sessions replayed at once: each is an agent, and a workload runs at
// most this many.
const MaxSessions = 10000

// Options selects what of a trace is replayed and how.
type Options struct {
	// Mode is Sessions or Timestamps; "" chooses Sessions, or Timestamps when every session
	// has a single request.
	Mode Mode
	// Sessions keeps the first N sessions to start (0: all).
	Sessions int
	// TimeScale multiplies every time of the trace (t_s and after_s); 0 means 1.
	TimeScale float64
	// FromS and ToS keep the requests sent in [FromS, ToS) seconds of the trace (ToS 0: to
	// the end); the replay's time 0 is FromS.
	FromS, ToS float64
}

// Validate checks the options' ranges.
func (o Options) Validate() error {
	var errs []error
	if o.Mode != "" && !slices.Contains(Modes, o.Mode) {
		errs = append(errs, fmt.Errorf("mode %q: must be %s or %s", o.Mode, Sessions, Timestamps))
	}
	if o.Sessions < 0 {
		errs = append(errs, fmt.Errorf("sessions = %d: must be ≥ 0 (0: all)", o.Sessions))
	}
	if o.TimeScale < 0 || math.IsNaN(o.TimeScale) || math.IsInf(o.TimeScale, 0) {
		errs = append(errs, fmt.Errorf("time-scale = %v: must be a positive number (0.5 replays twice as fast)", o.TimeScale))
	}
	if o.FromS < 0 || math.IsNaN(o.FromS) {
		errs = append(errs, fmt.Errorf("from-s = %v: must be ≥ 0 s", o.FromS))
	}
	if o.ToS < 0 || math.IsNaN(o.ToS) || (o.ToS > 0 && o.ToS <= o.FromS) {
		errs = append(errs, fmt.Errorf("to-s = %v: must be after from-s (%v s), or 0 for the trace's end", o.ToS, o.FromS))
	}
	return errors.Join(errs...)
}

// Recorded is what the trace says one request did; zero fields are unknown.
type Recorded struct {
	OK              bool    // a 2xx status with an e2e_s
	TS, E2ES, TTFTS float64 // seconds, as recorded (unscaled)
	Prompt, Output  int     // tokens
	TokensEstimated bool
}

// Plan is a trace made ready to replay: one script per session.
type Plan struct {
	Header    trace.Header
	Name      string // the trace file's name
	Mode      Mode
	TimeScale float64
	// Sessions names the session of each agent; Scripts[i] is agent i's.
	Sessions []string
	Scripts  []*agents.Script
	// Recorded[i][k] is what the trace recorded of agent i's turn k.
	Recorded [][]Recorded
	// Requests counts the turns; MaxTurns the longest session's.
	Requests, MaxTurns int
	// Outcomes is set when some request has a recorded e2e_s.
	Outcomes bool
	// Skipped counts the requests outside the window or the kept sessions.
	Skipped int
	// Model and ReasoningEffort are what most of the replayed requests named ("" when none
	// did; the effort also when it is not one a workload accepts, see
	// workloads.ReasoningEfforts), ties to the smallest; ModelRequests and EffortRequests
	// count the requests that named them. The replay's workload starts from them, and a turn
	// carries its own model or effort only when it differs, so that the workload's keys
	// (--model, --set) and the model the run chooses apply to the rest.
	Model, ReasoningEffort        string
	ModelRequests, EffortRequests int
	// Forced counts the turns whose recorded output length is forced (max_tokens with
	// ignore_eos); OutputMin and OutputMax bound those lengths, in tokens (0 when none is).
	Forced, OutputMin, OutputMax int

	tools toolSets // the tool definitions of each recorded size (tools.go)
}

// session is one session while the trace is read.
type session struct {
	name  string
	first float64
	index map[int]int // seq → turn index
	turns []agents.Turn
	recs  []Recorded
}

// Load reads the trace in r (named name in errors) one request at a time and builds the plan.
// The requests kept are held in memory as turns (a few hundred bytes each).
func Load(r io.Reader, name string, o Options) (*Plan, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.TimeScale == 0 {
		o.TimeScale = 1
	}
	rd, err := trace.NewReader(r, name)
	if err != nil {
		return nil, err
	}
	p := &Plan{Header: rd.Header(), Name: name, TimeScale: o.TimeScale, tools: toolSets{}}
	order, err := p.read(rd, o)
	if err != nil {
		return nil, err
	}
	if o.Sessions > 0 && len(order) > o.Sessions {
		for _, s := range order[o.Sessions:] {
			p.Skipped += len(s.turns)
		}
		order = order[:o.Sessions]
	}
	if len(order) == 0 {
		return nil, &SelectionError{fmt.Sprintf("%s: no request to replay (the trace has %d requests; the window and the sessions kept keep none)", name, p.Skipped)}
	}
	if len(order) > MaxSessions {
		return nil, &SelectionError{fmt.Sprintf("%s: %d sessions to replay, more than the %d agents a run has: replay fewer sessions, or a shorter window of the trace", name, len(order), MaxSessions)}
	}
	p.Mode = o.Mode
	if p.Mode == "" {
		p.Mode = defaultMode(order)
	}
	for _, s := range order {
		sc := &agents.Script{Open: p.Mode == Timestamps, Turns: s.turns}
		if err := sc.Validate(); err != nil {
			return nil, fmt.Errorf("%s: session %q: %w", name, s.name, err)
		}
		p.Sessions = append(p.Sessions, s.name)
		p.Scripts = append(p.Scripts, sc)
		p.Recorded = append(p.Recorded, s.recs)
		p.Requests += len(s.turns)
		p.MaxTurns = max(p.MaxTurns, len(s.turns))
	}
	p.common()
	return p, nil
}

// common sets the plan's most common model and effort, clears them from the turns that name
// them, and bounds the forced output lengths.
func (p *Plan) common() {
	models, efforts := map[string]int{}, map[string]int{}
	for _, sc := range p.Scripts {
		for _, t := range sc.Turns {
			models[t.Model]++
			efforts[t.ReasoningEffort]++
			if t.OutputTokens > 0 {
				if p.Forced == 0 || t.OutputTokens < p.OutputMin {
					p.OutputMin = t.OutputTokens
				}
				p.OutputMax = max(p.OutputMax, t.OutputTokens)
				p.Forced++
			}
		}
	}
	p.Model = mostCommon(models)
	if e := mostCommon(efforts); slices.Contains(workloads.ReasoningEfforts, e) {
		p.ReasoningEffort = e
	}
	p.ModelRequests, p.EffortRequests = models[p.Model], efforts[p.ReasoningEffort]
	for _, sc := range p.Scripts {
		for k := range sc.Turns {
			t := &sc.Turns[k]
			if p.Model != "" && t.Model == p.Model {
				t.Model = ""
			}
			if p.ReasoningEffort != "" && t.ReasoningEffort == p.ReasoningEffort {
				t.ReasoningEffort = ""
			}
		}
	}
	if p.ReasoningEffort == "" {
		p.EffortRequests = 0
	}
	if p.Model == "" {
		p.ModelRequests = 0
	}
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

// read reads the requests in the window into sessions, ordered by their first send.
func (p *Plan) read(rd *trace.Reader, o Options) ([]*session, error) {
	fromSend := p.Header.AfterSFrom == trace.AfterSend
	byName := map[string]*session{}
	var order []*session
	for {
		req, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if req.TS < o.FromS || (o.ToS > 0 && req.TS >= o.ToS) {
			p.Skipped++
			continue
		}
		s := byName[req.Session]
		if s == nil {
			s = &session{name: req.Session, first: req.TS, index: map[int]int{}}
			byName[req.Session] = s
			order = append(order, s)
		}
		s.add(req, o, fromSend, p.tools)
		p.Outcomes = p.Outcomes || req.E2ES > 0
	}
	slices.SortStableFunc(order, func(a, b *session) int { return cmpFloat(a.first, b.first) })
	return order, nil
}

// defaultMode is Sessions, or Timestamps when every session has a single request.
func defaultMode(order []*session) Mode {
	for _, s := range order {
		if len(s.turns) > 1 {
			return Sessions
		}
	}
	return Timestamps
}

// add appends req as the session's next turn, with its tool definitions taken from tools.
func (s *session) add(req trace.Request, o Options, fromSend bool, tools toolSets) {
	scale := func(sec float64) time.Duration {
		return time.Duration(math.Round(sec * o.TimeScale * float64(time.Second)))
	}
	t := agents.Turn{
		At: scale(req.TS - o.FromS), Wait: scale(req.AfterS), FromSend: fromSend,
		PromptTokens: req.PromptTokens, Extends: -1, ReplyTokens: req.OutputTokens - req.ReasoningTokens,
		OutputTokens: req.OutputTokens, MaxTokens: req.MaxTokens, Model: req.Model, ReasoningEffort: req.ReasoningEffort,
		Tools: tools.of(req.ToolsTokens), ToolCalls: req.ToolCalls, ToolNames: req.ToolNames, API: apiOf(req.API),
	}
	if req.ToolS != nil {
		t.ToolTime = scale(*req.ToolS)
	}
	if req.TokensEstimated && req.Status/100 != 2 {
		t.OutputTokens = 0 // a failed request's output is unknown: ask for what it asked
	}
	if req.ToolCalls > 0 {
		t.OutputTokens = 0 // a reply's tool calls are as long as the live model writes them
	}
	if len(s.turns) == 0 {
		t.Wait = 0 // the first turn kept starts at its t_s, whatever came before the window
	}
	if req.Extends != nil {
		if k, ok := s.index[*req.Extends]; ok {
			t.Extends = k
		}
	}
	if len(req.HashIDs) > 0 {
		t.Blocks, t.BlockTokens = req.HashIDs, BlockTokens
	}
	s.index[req.Seq] = len(s.turns)
	s.turns = append(s.turns, t)
	s.recs = append(s.recs, Recorded{
		OK: req.Status/100 == 2 && req.E2ES > 0, TS: req.TS, E2ES: req.E2ES, TTFTS: req.TTFTS,
		Prompt: req.PromptTokens, Output: req.OutputTokens, TokensEstimated: req.TokensEstimated,
	})
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// apiOf is the API a recorded request is replayed through: the Responses API for one that went
// through it, chat completions for chat and legacy completions (whose prompt is replayed as
// messages), and the workload's request.api when the trace does not say.
func apiOf(api string) string {
	switch api {
	case trace.APIResponses:
		return workloads.APIResponses
	case trace.APIChat, trace.APICompletions:
		return workloads.APIChat
	}
	return ""
}
