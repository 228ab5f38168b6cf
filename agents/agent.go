package agents

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
	"unicode"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/pacer"
	"github.com/agentsim/agentsim/workloads"
)

// Env is what every agent of a run shares.
type Env struct {
	Client      *Client
	Clock       *clock.Clock
	Pacer       pacer.Pacer
	Workload    *workloads.Workload
	Recorder    events.Recorder
	Board       *Board
	Calibration *Calibration
	// Tools, when set, is the run's tool set, read once and shared: every request carries it,
	// and the agents run the tool loop of docs/agentic.md. nil: no tools, a read step each
	// round.
	Tools *workloads.ToolSet

	toolWordsOnce sync.Once
	toolWords     int // words of Tools' JSON, which count in every prompt (see Agent.sentWords)
	// Tap, when set, is handed every request as it ends (nil: none).
	Tap Tap
	// Scripts, when set, holds one Script per agent: agent i plays Scripts[i] (a replayed
	// session) instead of drawing its rounds from the workload's distributions.
	Scripts []*Script
}

// Agent is one simulated agent: a conversation that grows append-only, round after round.
type Agent struct {
	ID  int
	env *Env
	rng *rand.Rand

	// messages is the conversation: generated text is made when a request is sent and not
	// kept, nor is go-openai's form of a message (152 bytes, most of them fields an agent never
	// sets): 10,000 agents would otherwise hold their conversations while they wait and
	// stream (docs/speed.md).
	messages []message
	words    int // words of text in messages, for the token estimate

	result   Result // the round's request, as it ended: kept here, not on the stack (see request)
	attempts int    // the round's last attempt, counted from 0

	task      task      // with tools: where the agent is in its task
	toolRuns  []toolRun // the tool calls of a step, reused
	toolOrder []int     // their order of completion, reused

	script    *Script            // nil: rounds from the workload's distributions
	scriptSet *workloads.ToolSet // the tools the script's current turn sends; nil: none
	scheduled time.Time          // an open-loop request's scheduled send; zero otherwise
}

// NewAgent returns agent id of the run, its randomness seeded from the workload seed.
func NewAgent(id int, env *Env) *Agent {
	seed := uint64(env.Workload.Seed)
	a := &Agent{ID: id, env: env, rng: rand.New(rand.NewPCG(seed, uint64(id)+1))}
	if id < len(env.Scripts) {
		a.script = env.Scripts[id]
	}
	return a
}

// Run runs the agent's rounds until they are all done, the context fills up, or rounds is
// done (the run's duration has passed or it was interrupted). requests bounds the requests in
// flight: it ends later than rounds, after the grace period, and cancels them.
func (a *Agent) Run(rounds, requests context.Context) {
	w := a.env.Workload
	defer a.finish()
	a.record(&events.Event{Kind: events.AgentStart})
	if a.script != nil {
		a.runScript(rounds, requests)
		return
	}
	if w.StartJitter > 0 {
		if a.env.Clock.Sleep(rounds, time.Duration(a.rng.Int64N(int64(w.StartJitter)))) != nil {
			return
		}
	}
	a.say(openai.ChatMessageRoleSystem, "system", 0, w.Context.SystemTokens)
	a.say(openai.ChatMessageRoleUser, "task", 0, w.Context.InitialTokens)
	if a.withTools() {
		a.startTask(0)
	}
	for round := 1; round <= w.Rounds && rounds.Err() == nil; round++ {
		if !a.round(rounds, requests, round) {
			return
		}
	}
}

// round runs one round; false ends the agent. Every round that starts ends with one round_done:
// ok, failed, or cancelled when it ends before its request is sent. The agent waits in round
// for as long as its request streams, so what comes before and after the request is done in
// prepare and conclude, whose frames are gone by then (see request).
func (a *Agent) round(rounds, requests context.Context, round int) bool {
	permit, est, output, ok := a.prepare(rounds, round)
	if !ok {
		return false
	}
	res := &a.result
	*res = Result{}
	a.request(rounds, requests, round, permit, est, output, res)
	return a.conclude(rounds, requests, round, permit, res)
}

// prepare does a round's work before its request: the read step of a workload without tools
// (its tool time, then the read), the context check and the pacer. false means the round
// ended there, cancelled.
//
//go:noinline
func (a *Agent) prepare(rounds context.Context, round int) (permit *pacer.Permit, est, output int, ok bool) {
	w := a.env.Workload
	a.record(&events.Event{Kind: events.RoundStart, Round: round})
	read := 0
	if !a.withTools() {
		a.set(events.StateReading)
		if a.env.Clock.Sleep(rounds, w.ToolTime.Sample(a.rng)) != nil {
			a.cancelled(round, "")
			return nil, 0, 0, false
		}
		read = w.Context.ReadTokens.Sample(a.rng)
		a.say(openai.ChatMessageRoleUser, "read", round, read)
	}
	est = a.env.Calibration.Tokens(a.sentWords(), len(a.messages))
	a.record(&events.Event{Kind: events.ReadDone, Round: round, ReadTokens: read, ContextTokens: est})
	// The output is bounded by what is sent as max_tokens (the sampled length when forced).
	output = w.Request.Reserved(w.Request.OutputTokens.Sample(a.rng))
	if est+output > w.Context.MaxContextTokens {
		a.record(&events.Event{Kind: events.Warning, Round: round, ContextTokens: est, Reason: events.EndContextFull,
			Message: fmt.Sprintf("context of %d tokens + %d output would exceed max_context_tokens %d: agent stops", est, output, w.Context.MaxContextTokens)})
		a.cancelled(round, events.EndContextFull)
		return nil, 0, 0, false
	}
	permit, ok = a.acquire(rounds, round, est, output)
	if !ok {
		reason := events.EndPacerRefused
		if rounds.Err() != nil {
			reason = ""
		}
		a.cancelled(round, reason)
		return nil, 0, 0, false
	}
	return permit, est, output, true
}

// conclude does a round's work after its request: the release, the reply added to the
// conversation, the tools it calls, round_done and the think time. The permit is released
// when the reply ends, or, with pacer.hold_across_tools, after its tools. false ends the
// agent.
//
//go:noinline
func (a *Agent) conclude(rounds, requests context.Context, round int, permit *pacer.Permit, res *Result) bool {
	hold := a.withTools() && a.env.Workload.Pacer.HoldAcrossTools && res.Err == nil
	if !hold {
		a.release(round, permit, res)
	}
	if res.Err != nil {
		if res.Class == events.ClassMalformedToolCall && a.withTools() {
			a.malformed(round)
		}
		a.record(&events.Event{Kind: events.RoundDone, Round: round, Outcome: events.RoundFailed, Class: res.Class})
		return requests.Err() == nil && rounds.Err() == nil
	}
	a.sayReply(res)
	taskSteps, ok := 0, true
	if a.withTools() {
		taskSteps, ok = a.afterReply(rounds, round, res)
	}
	if hold {
		a.release(round, permit, res)
	}
	a.record(&events.Event{Kind: events.RoundDone, Round: round, Outcome: events.RoundOK, TaskSteps: taskSteps})
	if !ok {
		return false
	}
	a.set(events.StateThinking)
	return a.env.Clock.Sleep(rounds, a.env.Workload.ThinkTime.Sample(a.rng)) == nil
}

// cancelled ends a round that did not send its request, with the agent's own reason or, when
// the run stopped it, none (the stop event says why).
func (a *Agent) cancelled(round int, reason events.EndReason) {
	a.record(&events.Event{Kind: events.RoundDone, Round: round, Outcome: events.RoundCancelled, Reason: reason})
}

// acquire waits for a pacer permit; false when the run stopped meanwhile.
func (a *Agent) acquire(rounds context.Context, round, prompt, output int) (*pacer.Permit, bool) {
	a.set(events.StatePacerWait)
	a.record(&events.Event{Kind: events.PacerWait, Round: round})
	start := a.env.Clock.Now()
	ops := &a.env.Board.acquires
	ops.began.Add(1)
	defer ops.recorded.Add(1)
	permit, err := a.env.Pacer.Acquire(rounds, pacer.Demand{Agent: a.ID, PromptTokens: prompt, ExpectedOutputTokens: output})
	if err != nil {
		if rounds.Err() == nil { // a refusal (a request larger than a tpm budget), not the run stopping
			a.record(&events.Event{Kind: events.Warning, Round: round, Reason: events.EndPacerRefused, Message: "pacer: " + err.Error()})
		}
		return nil, false
	}
	a.recordAfter(&events.Event{Kind: events.PacerAcquired, Round: round, Permit: permit.ID,
		PacerWaitS: a.env.Clock.Since(start).Seconds()}, a.env.Clock.Now())
	return permit, true
}

// request sends the round's request, retrying as the policy allows, and leaves the last
// attempt's result in res. From here down to the stream's reader the agent's frames hold no
// event, Result or Request by value: the goroutine waits in them for as long as the stream
// lasts, and its stack keeps the size they need (docs/speed.md).
func (a *Agent) request(rounds, requests context.Context, round int, permit *pacer.Permit, est, output int, res *Result) {
	w := a.env.Workload
	req := &Request{API: w.Request.API, Model: w.Model, Conversation: (*conversation)(a), MaxTokens: w.Request.MaxTokens,
		ReasoningEffort: effort(w.Request.ReasoningEffort), Timeouts: w.Request.Timeouts}
	if w.Request.ForceOutputLength {
		req.MaxTokens, req.IgnoreEOS = output, true
	}
	if a.withTools() {
		a.offerTools(req)
	}
	a.send(rounds, requests, round, permit, req, est, res)
}

// send sends req, retrying as the policy allows, and leaves the last attempt's result in res.
func (a *Agent) send(rounds, requests context.Context, round int, permit *pacer.Permit, req *Request, est int, res *Result) {
	w := a.env.Workload
	for attempt := 0; ; attempt++ {
		a.attempt(requests, round, attempt, permit.ID, req, est, res)
		if res.Err == nil || !res.Retryable() || !w.Retry.ShouldRetry(attempt+1) || rounds.Err() != nil {
			return
		}
		if !a.backoff(requests, round, attempt, res) {
			return
		}
	}
}

// backoff records a retry of attempt and waits its delay; false means requests ended first.
//
//go:noinline
func (a *Agent) backoff(requests context.Context, round, attempt int, res *Result) bool {
	delay := a.env.Workload.Retry.Delay(attempt+1, res.RetryAfter, a.rng.Float64())
	a.record(&events.Event{Kind: events.Retry, Round: round, Request: requestID(a.ID, round, attempt), Attempt: attempt + 1,
		BackoffS: delay.Seconds(), RetryAfterS: res.RetryAfter.Seconds()})
	a.set(events.StateBackoff)
	return a.env.Clock.Sleep(requests, delay) == nil
}

// requestID names an attempt in the events: a<agent>-r<round>-<attempt>.
func requestID(agent, round, attempt int) string {
	return fmt.Sprintf("a%d-r%d-%d", agent, round, attempt)
}

// attempt sends one request, records its events and leaves its result in res.
func (a *Agent) attempt(ctx context.Context, round, attempt int, permit uint64, req *Request, est int, res *Result) {
	id := requestID(a.ID, round, attempt)
	a.attempts = attempt
	a.set(events.StateRequesting)
	sent := a.env.Clock.Now()
	a.env.Board.opens.began.Add(1)
	stream := a.env.Board.open(id, a.ID, permit, sent)
	a.recordSent(round, attempt, id, req.MaxTokens, est, sent)
	a.env.Board.opens.recorded.Add(1)
	obs := &requestLog{a: a, round: round, id: id, stream: stream, keepFrames: a.env.Tap != nil}
	a.env.Client.callInto(withRequest(ctx, id, sent), req, obs, res)
	ended := a.env.Clock.Now()
	a.env.Board.closes.began.Add(1)
	a.env.Board.close(stream, res.Usage.Completion)
	a.recordEnd(res, round, id, attempt, ended)
	a.env.Board.closes.recorded.Add(1)
	if a.env.Tap != nil {
		a.tap(res, obs.frames)
	}
	switch {
	case res.Err == nil && a.scriptSet != nil:
		a.env.Calibration.ObserveTools(a.scriptSet, a.sentWords(), req.messages(), res.Usage.Prompt)
	case res.Err == nil:
		a.env.Calibration.Observe(a.sentWords(), req.messages(), res.Usage.Prompt)
	}
}

// recordSent records an attempt sent at sent. Its event is built here, not in attempt, whose
// frame the agent keeps while it streams.
//
//go:noinline
func (a *Agent) recordSent(round, attempt int, id string, maxTokens, est int, sent time.Time) {
	e := events.Event{Kind: events.RequestSent, Round: round, Request: id, Attempt: attempt,
		ContextTokens: est, MaxTokens: maxTokens}
	if !a.scheduled.IsZero() && attempt == 0 {
		e.ScheduleLagS = max(0, sent.Sub(a.scheduled).Seconds())
	}
	a.recordAfter(&e, sent)
}

// recordEnd records the terminal event of an attempt that ended at ended (see recordSent).
//
//go:noinline
func (a *Agent) recordEnd(res *Result, round int, id string, attempt int, ended time.Time) {
	var e events.Event
	terminalEvent(&e, res, round, id, attempt)
	a.recordAfter(&e, ended)
}

// tap hands the ended request to the Tap (see recordSent).
//
//go:noinline
func (a *Agent) tap(res *Result, frames []time.Time) { a.env.Tap(a.ID, *res, frames) }

// release returns the permit with the request's outcome and records it.
func (a *Agent) release(round int, permit *pacer.Permit, res *Result) {
	o := res.Outcome()
	released := a.env.Clock.Now()
	ops := &a.env.Board.releases
	ops.began.Add(1)
	defer ops.recorded.Add(1)
	permit.Release(o)
	leaked := o.Kind == events.RequestTimeout && a.env.Workload.Pacer.LeakOnTimeout
	a.recordAfter(&events.Event{Kind: events.Release, Round: round, Permit: permit.ID, RequestOutcome: o.Kind, Leaked: leaked}, released)
}

func (a *Agent) finish() {
	a.set(events.StateDone)
	a.record(&events.Event{Kind: events.AgentDone})
}

// message is one message of an agent's conversation: its role and its text, or how to make
// the text again, and the tool calls of an assistant message or, of a tool message, the call
// it answers (calls[0]).
type message struct {
	role    string
	content string // the text, unless it is generated (text)
	text    textOf
	calls   []ToolCall
	// wire is the message's length in a request body of each form (wireChat, wireResponses),
	// in bytes; 0 until measured (wirePlan.size).
	wire [2]int32
}

// textOf names the deterministic text of a message: workloads.Text of the run's seed, the
// agent, round, part and words.
type textOf struct {
	round int
	part  string
	words int // 0: not generated
}

// say appends a message of about tokens tokens of deterministic text; the text itself is made
// when a request is sent (conversation). It is not inlined into Run, which the agent's
// goroutine stays in (see request).
//
//go:noinline
func (a *Agent) say(role, part string, round, tokens int) {
	if tokens <= 0 {
		return
	}
	words := workloads.WordsForTokens(tokens, a.env.Calibration.TokensPerWord())
	a.messages = append(a.messages, message{role: role, text: textOf{round: round, part: part, words: words}})
	a.words += words
}

// conversation is an agent's conversation as a request sends it.
type conversation Agent

// Len implements Conversation.
func (c *conversation) Len() int { return len(c.messages) }

// plan is how a request through api (wireChat, wireResponses) writes the conversation as its
// body is read, with tools, the encoded tool definitions (nil: none).
func (c *conversation) plan(api int, tools []byte) *wirePlan {
	return &wirePlan{api: api, msgs: c.messages[:len(c.messages):len(c.messages)], seed: c.env.Workload.Seed, agent: c.ID, tools: tools}
}

// Messages implements Conversation: the messages, their generated text made again.
func (c *conversation) Messages() []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(c.messages))
	for i, m := range c.messages {
		out[i].Role, out[i].Content = m.role, m.content
		if t := m.text; t.words > 0 {
			out[i].Content = workloads.Text(c.env.Workload.Seed, c.ID, t.round, t.part, t.words)
		}
		switch {
		case len(m.calls) > 0 && m.role == openai.ChatMessageRoleTool:
			out[i].ToolCallID = m.calls[0].ID
		case len(m.calls) > 0:
			out[i].ToolCalls = wireCalls(m.calls)
		}
	}
	return out
}

// sentWords is the words a request sends: the conversation's and the tool definitions', whose
// tokens the server counts in the prompt too (without them the calibration would take the
// definitions for longer words).
func (a *Agent) sentWords() int {
	if !a.withTools() {
		return a.words
	}
	e := a.env
	e.toolWordsOnce.Do(func() { e.toolWords = countWords(string(e.Tools.JSON())) })
	return a.words + e.toolWords
}

func (a *Agent) set(s events.State) { a.env.Board.set(a.ID, s, a.env.Clock.Now()) }

func (a *Agent) record(e *events.Event) {
	e.Agent = a.ID
	if r, ok := a.env.Recorder.(RefRecorder); ok {
		r.RecordRef(e)
		return
	}
	recordCopy(a.env.Recorder, e)
}

// recordCopy hands a copy of e to r: out of line, so that the copy is not in record's frame.
//
//go:noinline
func recordCopy(r events.Recorder, e *events.Event) { r.Record(*e) }

// RefRecorder is a Recorder that also takes an event by reference and copies it, as the
// harness's run does. Agents record through it when they can: an event is 360 bytes, and each
// copy of it on the way to the log is stack an agent keeps for as long as it streams
// (docs/speed.md).
type RefRecorder interface {
	events.Recorder
	RecordRef(e *events.Event)
}

// recordAfter records e for a change of the board or the pacer made at at, and reports how
// long the change went unrecorded as lag (clock.Lag.Raise): an agent can be descheduled
// between the two, and a sample taken meanwhile sees the change without its event. The
// verdict's conservation checks allow for disagreements no longer than that lag
// (docs/verdicts.md).
func (a *Agent) recordAfter(e *events.Event, at time.Time) {
	a.record(e)
	a.env.Clock.Lag().Raise(a.env.Clock.Since(at))
}

// effort maps the workload's reasoning effort to the request field: "none" sends nothing.
func effort(e string) string {
	if e == "none" {
		return ""
	}
	return e
}

// countWords is len(strings.Fields(s)) without the slice of fields: a reply's words are
// counted when every agent's request ends at once.
func countWords(s string) int {
	n, inWord := 0, false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			inWord = false
		case !inWord:
			inWord, n = true, n+1
		}
	}
	return n
}
